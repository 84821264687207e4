// Selective activation checkpointing on one dsv3-16b MoE block (layer 1), FSDP 8 × EP 2, against
// torchtitan's policies written out by hand (sac_policy.ts cites them): D 2048, 16 heads, MLA
// (q_lora 0, kv_lora 512, qk nope 128 + rope 64, v 128), 64 experts of hidden 1408, top-6,
// 2 shared experts (hidden 2816). Eager op SAC counts the block's mms in forward order: wq 1 (saved),
// wkv_a 2, wkv_b 3 (saved), wo 4, the router gate forced to recompute and not counted, shared w1 5
// (saved), w3 6, w2 7 (saved); SDPA, topk and the all-to-alls are saved; grouped_mm, norms, adds,
// SwiGLU, permutes and the combine are not.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph, type GraphNode, type StepGraph, type StepConfig } from '../../../src/graph';
import { isRecomputeNode, RECOMPUTE_SUFFIX } from '../../../src/graph/checkpoint';
import type { ModelCtx } from '../../../src/graph/forward';
import { savedForwardNodes } from '../../../src/graph/sac_policy';
import { verifyGraph } from '../../../src/graph/verify';
import { simulate } from '../../../src/sim';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from '../backends/helpers';
import { expectCollectivesAligned } from '../sim/invariants';
import { B, S, T, D, H, K, F, FS, E, BF16, mm } from './dsv3_16b';

const R = T * K; // routed rows a rank's experts receive, balanced
const FP32 = 4;

function build(extra: Partial<StepConfig> = {}, ep = 2): StepGraph {
  const mesh = { dpReplicate: 1, dpShard: 8, tp: 1, ep };
  return verifyGraph(buildStepGraph({ model: 'dsv3-16b', worldSize: 8, batch: B, seqLen: S, mesh, ...extra }));
}

const sac = (extra: Partial<StepConfig> = {}, ep = 2) => build({ activationCheckpointing: 'selective', ...extra }, ep);
const p = (names: readonly string[]) => names.map((n) => `layers.1.${n}`);
/** Layer 1's recomputed nodes, by the name of the forward node each copies. */
const recomputed = (g: StepGraph) =>
  g.nodes.filter((n) => n.layer === 1 && isRecomputeNode(n)).map((n) => n.name.replace(RECOMPUTE_SUFFIX, ''));
const stepFlops = (g: StepGraph) => g.nodes.reduce((s, n) => s + n.flops, 0);

/** Bytes of the tensors layer 1's forward writes that a backward node reads (aliases count their base once). */
function savedBytes(g: StepGraph): number {
  const written = new Set(g.nodes.filter((n) => n.layer === 1 && n.phase === 'forward').flatMap((n) => n.outputs));
  const base = (t: string) => g.tensors[t].aliasOf ?? t;
  const read = new Set(
    g.nodes
      .filter((n) => n.phase === 'backward')
      .flatMap((n) => n.inputs)
      .map(base)
      .filter((t) => written.has(t)),
  );
  return [...read].reduce((s, t) => s + g.tensors[t].bytes, 0);
}

describe('the save policies on a dsv3-16b block (sac_policy.ts)', () => {
  const forward = (layer: number) => build().nodes.filter((n) => n.layer === layer && n.phase === 'forward');
  const saved = (policy: ModelCtx['savePolicy'], nodes: readonly GraphNode[]) =>
    [...savedForwardNodes({ savePolicy: policy } as ModelCtx, nodes)].sort();
  const a2a = ['moe.dispatch.counts.all_to_all', 'moe.dispatch.all_to_all', 'moe.combine.all_to_all'];
  const always = p(['attention.sdpa', 'moe.router.topk', ...a2a, ...a2a.map((n) => `${n}.wait`)]);

  it('eager op SAC: every second mm, the router gate forced out of the count; SDPA, topk, all-to-alls', () => {
    const mms = p(['attention.wq', 'attention.wkv_b', 'moe.shared_experts.w1', 'moe.shared_experts.w2']);
    expect(saved('eager', forward(1))).toEqual([...mms, ...always].sort());
  });

  it("graph_trainer's eager policy counts the gate: wq 1, wkv_b 3, gate 5, shared w3 7 saved", () => {
    const mms = p(['attention.wq', 'attention.wkv_b', 'moe.router.gate', 'moe.shared_experts.w3']);
    expect(saved('graph_eager', forward(1))).toEqual([...mms, ...always].sort());
  });

  it("graph_trainer's default saves every mm and no grouped GEMM", () => {
    const attn = ['wq', 'wkv_a', 'wkv_b', 'wo'].map((w) => `attention.${w}`);
    const shared = ['w1', 'w3', 'w2'].map((w) => `moe.shared_experts.${w}`);
    expect(saved('graph_default', forward(1))).toEqual(
      [...p([...attn, 'moe.router.gate', ...shared]), ...always].sort(),
    );
  });

  it('dsv3-671b (q_lora 1536): wq_a 1, wkv_a 3, wo 5 and shared w3 7 of its mms saved', () => {
    const g = buildStepGraph({
      model: 'dsv3-671b',
      worldSize: 8,
      batch: 1,
      seqLen: 64,
      mesh: { dpReplicate: 1, dpShard: 8, tp: 1, ep: 8 },
    });
    const block = g.nodes.filter((n) => n.layer === 3 && n.phase === 'forward'); // the first MoE block
    const mms = ['attention.wq_a', 'attention.wkv_a', 'attention.wo', 'moe.shared_experts.w3'];
    const names = [...mms, 'attention.sdpa', 'moe.router.topk'].map((n) => `layers.3.${n}`);
    const a2a = always.filter((n) => n.includes('all_to_all')).map((n) => n.replace('layers.1.', 'layers.3.'));
    expect(saved('eager', block)).toEqual([...names, ...a2a].sort());
  });

  it('the dense block 0: wq, wkv_b, w1, w2 of its seven mms and SDPA', () => {
    const names = ['attention.wq', 'attention.wkv_b', 'attention.sdpa', 'feed_forward.w1', 'feed_forward.w2'];
    expect(saved('eager', forward(0))).toEqual(names.map((n) => `layers.0.${n}`).sort());
  });
});

describe('selective AC on a dsv3-16b MoE block, FSDP 8 × EP 2', () => {
  // what the backward reads and the policy did not save; the permute before the dispatch
  // all-to-all, experts' w2, the un-sort and the combine feed only saved all-to-alls or nothing
  const eagerRecompute = p([
    'attention_norm',
    'attention.wkv_a',
    'attention.kv_norm',
    'attention.wo',
    'attention.residual',
    'ffn_norm',
    'moe.router.gate',
    'moe.dispatch.sort',
    'moe.experts.w1',
    'moe.experts.w3',
    'moe.experts.swiglu',
    'moe.shared_experts.w3',
    'moe.shared_experts.swiglu',
  ]);

  it('recomputes exactly the ops the eager policy leaves that a gradient reads', () => {
    expect(recomputed(sac())).toEqual(eagerRecompute);
  });

  it('re-runs no all-to-all and no topk: the backward has only its own two token all-to-alls', () => {
    const bwdA2a = (g: StepGraph) =>
      g.nodes.filter((n) => n.layer === 1 && n.phase === 'backward' && n.kind === 'all_to_all');
    expect(bwdA2a(sac()).map((n) => n.name)).toEqual(
      p(['moe.combine.all_to_all.bwd', 'moe.dispatch.all_to_all.bwd']).map((n) => `${n}${RECOMPUTE_SUFFIX}`),
    );
    expect(bwdA2a(build({ activationCheckpointing: 'full' }))).toHaveLength(5); // 3 recomputed + 2
    expect(recomputed(sac()).filter((n) => n.includes('topk'))).toEqual([]);
  });

  it('without ep the permute and experts w2 are read by gradients, so they are recomputed', () => {
    const before = eagerRecompute.slice(0, eagerRecompute.indexOf('layers.1.moe.dispatch.sort'));
    const experts = p([
      'moe.dispatch.permute',
      'moe.experts.w1',
      'moe.experts.w3',
      'moe.experts.swiglu',
      'moe.experts.w2',
    ]);
    const shared = p(['moe.shared_experts.w3', 'moe.shared_experts.swiglu']);
    expect(recomputed(sac({}, 1))).toEqual([...before, ...experts, ...shared]);
  });

  it('keeps the hand-counted saved activations, between full and none', () => {
    const hand =
      T * D * BF16 + // block output (the next block's saved input)
      T * H * 192 * BF16 + // wq
      T * H * (128 + 128) * BF16 + // wkv_b
      T * H * 128 * BF16 + // SDPA output
      B * H * S * FP32 + // its logsumexp
      T * K * FP32 + // topk scores
      T * K * 4 + // expert ids (i32)
      R * D * BF16 + // dispatch all-to-all output
      T * K * D * BF16 + // combine all-to-all output
      T * FS * BF16; // shared experts' w1 (w2's output is saved too, but no gradient reads it)
    expect(savedBytes(sac())).toBe(hand);
    expect(savedBytes(build({ activationCheckpointing: 'full' }))).toBe(T * D * BF16);
    expect(savedBytes(build())).toBeGreaterThan(hand);
  });

  it('adds the hand-counted recompute FLOPs per MoE block; none < selective < full', () => {
    const g = sac();
    const layer1 = g.nodes.filter((n) => n.layer === 1 && isRecomputeNode(n) && /mm$|matmul/.test(String(n.op)));
    const mms = mm(T, 512 + 64, D) + mm(T, D, H * 128) + mm(T, E, D) + 2 * mm(R, F, D) + mm(T, FS, D);
    expect(layer1.reduce((s, n) => s + n.flops, 0)).toBe(mms);
    const full = build({ activationCheckpointing: 'full' });
    expect(stepFlops(build())).toBeLessThan(stepFlops(g));
    expect(stepFlops(g)).toBeLessThan(stepFlops(full));
  });

  it('sits between none and full in peak memory at 4096 tokens (at 512 the activations do not set it)', () => {
    const peak = (ac: StepConfig['activationCheckpointing']) =>
      scheduleMemoryProfile(build({ seqLen: 4096, activationCheckpointing: ac })).peakBytes;
    const selective = peak('selective');
    expect(selective).toBeLessThan(peak('none'));
    expect(selective).toBeGreaterThan(peak('full'));
  });
});

describe("graph_trainer's default memory policy on dsv3-16b (aot_fx_trace)", () => {
  it('builds, recomputing no matmul: only norms, adds, the sort, grouped GEMMs and SwiGLUs', () => {
    const g = build({ compileMode: 'aot_fx_trace', memoryPolicy: 'default' });
    const want = ['attention_norm', 'attention.kv_norm', 'attention.residual', 'ffn_norm', 'moe.dispatch.sort'];
    expect(recomputed(g)).toEqual(
      p([...want, 'moe.experts.w1', 'moe.experts.w3', 'moe.experts.swiglu', 'moe.shared_experts.swiglu']),
    );
    const flops = stepFlops(g);
    expect(flops).toBeGreaterThan(stepFlops(build({ compileMode: 'aot_fx_trace', memoryPolicy: 'none' })));
    expect(flops).toBeLessThan(stepFlops(sac()));
  });
});

describe('every backend runs a selective dsv3-debug step, 4 ranks × EP 2', () => {
  const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const mesh = { dpReplicate: 1, dpShard: 4, tp: 1, ep: 2 };
  const g = verifyGraph(
    buildStepGraph({
      model: 'dsv3-debug',
      worldSize: 4,
      batch: 1,
      seqLen: 256,
      mesh,
      activationCheckpointing: 'selective',
    }),
  );
  it.each(BACKEND_NAMES)('%s returns a valid schedule the simulator runs without a mismatch', (backend) => {
    const s = runBackend(backend, g, cost);
    expectValidSchedule(g, s, backend === 'aot_eager_autobucketing' ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
    const res = simulate({ worldSize: 4, schedules: s, cost });
    expect(res.mismatch).toBeUndefined();
    expectCollectivesAligned(res, 4);
  });
});
