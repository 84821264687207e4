// Tensor parallel on DeepSeek-V3 blocks (graph/moe.ts, moe_block.ts, tp.ts) against hand counts
// written out from torchtitan's 16B config: D 2048, 16 heads (8 per rank at tp 2), MLA (q_lora 0,
// kv_lora 512, qk nope 128 + rope 64, v 128), 64 experts of hidden 1408, top-6, 2 shared experts.
// Mesh FSDP 4 × TP 2 on 8 ranks, with EP 2 (efsdp = 4 · 2 / 2 = 4, stride 2) and without.
// The plan is torchtitan b5bcd76's: models/deepseek_v3/sharding.py and common/moe_sharding.py.
import { describe, expect, it } from 'vitest';
import { buildStepGraph, paramTensorIds, resolveStepConfig, type GraphNode, type StepGraph } from '../../../src/graph';
import { shardParam } from '../../../src/graph/fsdp';
import { verifyGraph } from '../../../src/graph/verify';
import { MODEL_PRESETS, paramCount, paramTable } from '../../../src/model';
import { B, S, T, D, K, F, FS, E, BF16, mm, layerNodes } from './dsv3_16b';

const TS = T / 2; // the sequence shard of tp 2
const HL = 16 / 2; // heads per rank
const QK = 128 + 64;
const V = 128;
const KV_LORA = 512;

const graphs = new Map<number, StepGraph>();
function build(ep: number): StepGraph {
  let g = graphs.get(ep);
  if (g === undefined) {
    g = buildStepGraph({
      model: 'dsv3-16b',
      worldSize: 8,
      batch: B,
      seqLen: S,
      mesh: { dpReplicate: 1, dpShard: 4, tp: 2, ep },
    });
    verifyGraph(g);
    graphs.set(ep, g);
  }
  return g;
}

const sumFlops = (ns: readonly GraphNode[]) =>
  ns.filter((n) => n.op === 'matmul' || n.op === 'grouped_mm').reduce((s, n) => s + n.flops, 0);
const tpCollectives = (ns: readonly GraphNode[]) => ns.filter((n) => n.collective?.group === 'tp' && n.kind !== 'wait');

/** MLA on all T tokens with this rank's 8 heads: wq, wkv_a (replicated), wkv_b, wo. */
const mlaFlops = mm(T, HL * QK, D) + mm(T, KV_LORA + 64, D) + mm(T, HL * (128 + V), KV_LORA) + mm(T, D, HL * V);
/** The shared experts on all T tokens (gathered), their hidden split over tp. */
const sharedFlops = 2 * mm(T, FS / 2, D) + mm(T, D, FS / 2);

describe('one dsv3-16b MoE block under TP 2', () => {
  it('with EP 2 routes the sequence shard: router and experts on T/2 tokens, full F', () => {
    const routed = mm(TS, E, D) + 2 * mm(TS * K, F, D) + mm(TS * K, D, F);
    const g = build(2);
    expect(sumFlops(layerNodes(g, 'forward'))).toBe(mlaFlops + routed + sharedFlops);
    expect(sumFlops(layerNodes(g, 'backward'))).toBe(2 * (mlaFlops + routed + sharedFlops));
    const dispatch = g.nodes.find((n) => n.name === 'layers.1.moe.dispatch.all_to_all')!.collective!;
    expect(dispatch).toMatchObject({ group: 'ep', groupSize: 2, inputBytes: TS * K * D * BF16 });
  });

  it('with EP 1 routes every token on F / 2 of each expert', () => {
    const routed = mm(T, E, D) + 2 * mm(T * K, F / 2, D) + mm(T * K, D, F / 2);
    const g = build(1);
    expect(sumFlops(layerNodes(g, 'forward'))).toBe(mlaFlops + routed + sharedFlops);
    expect(sumFlops(layerNodes(g, 'backward'))).toBe(2 * (mlaFlops + routed + sharedFlops));
    expect(g.nodes.some((n) => n.kind === 'all_to_all')).toBe(false);
  });

  it('runs MLA attention on its 8 heads over all tokens, norms on the sequence shard', () => {
    for (const ep of [1, 2]) {
      const fwd = layerNodes(build(ep), 'forward');
      const attn = fwd.find((n) => n.op === 'attention')!;
      expect(attn.attrs).toMatchObject({ heads: HL, seq: S });
      expect(attn.flops).toBe((2 * B * HL * S * S * QK + 2 * B * HL * S * S * V) / 2);
      const norm = fwd.find((n) => n.name === 'layers.1.attention_norm')!;
      expect(norm.attrs).toMatchObject({ rows: TS, cols: D });
      const kvNorm = fwd.find((n) => n.name === 'layers.1.attention.kv_norm')!;
      expect(kvNorm.attrs).toMatchObject({ rows: T, cols: KV_LORA }); // replicated: every token
    }
  });
});

/** [name, kind, input bytes, output bytes] of a block's TP collectives in program order. */
type Coll = [string, string, number, number];
const gather = (name: string): Coll => [name, 'all_gather', TS * D * BF16, T * D * BF16];
const scatter = (name: string): Coll => [name, 'reduce_scatter', T * D * BF16, TS * D * BF16];
const rows = (ns: readonly GraphNode[]): Coll[] =>
  ns.map((n) => [n.name, n.kind, n.collective!.inputBytes, n.collective!.outputBytes]);
const p1 = 'layers.1';
/** Replicated weights (norms, wkv_a, router gate): partial gradients all-reduced on tp, bf16. */
const allReduces = (): Coll[] =>
  (
    [
      ['moe.router.gate', E * D],
      ['ffn_norm', D],
      ['attention.kv_norm', KV_LORA],
      ['attention.wkv_a', (KV_LORA + 64) * D],
      ['attention_norm', D],
    ] as const
  ).map(([m, n]) => [`${p1}.${m}.weight.tp_all_reduce`, 'all_reduce', n * BF16, n * BF16]);

describe('the TP collectives of one dsv3-16b MoE block', () => {
  it('EP 2: gather for attention and the shared experts, reduce-scatter after wo and w2', () => {
    const g = build(2);
    expect(rows(tpCollectives(layerNodes(g, 'forward')))).toEqual([
      gather(`${p1}.attention_norm.tp_all_gather`),
      scatter(`${p1}.attention.wo.tp_reduce_scatter`),
      gather(`${p1}.moe.shared_experts.tp_all_gather`),
      scatter(`${p1}.moe.shared_experts.w2.tp_reduce_scatter`),
    ]);
    const bwd = tpCollectives(layerNodes(g, 'backward'));
    expect(rows(bwd.filter((n) => n.kind === 'all_reduce')).sort()).toEqual(allReduces().sort());
    expect(rows(bwd.filter((n) => n.kind !== 'all_reduce'))).toEqual([
      gather(`${p1}.moe.shared_experts.w2.bwd.tp_all_gather`),
      scatter(`${p1}.moe.shared_experts.bwd.tp_reduce_scatter`),
      gather(`${p1}.attention.wo.bwd.tp_all_gather`),
      scatter(`${p1}.attention_norm.bwd.tp_reduce_scatter`),
    ]);
    for (const n of tpCollectives(g.nodes)) expect(n.collective).toMatchObject({ group: 'tp', groupSize: 2 });
  });

  it('EP 1: the MoE input gathered once, routed and shared outputs reduce-scattered apart', () => {
    const g = build(1);
    expect(rows(tpCollectives(layerNodes(g, 'forward')))).toEqual([
      gather(`${p1}.attention_norm.tp_all_gather`),
      scatter(`${p1}.attention.wo.tp_reduce_scatter`),
      gather(`${p1}.moe.tp_all_gather`),
      scatter(`${p1}.moe.routed_experts.tp_reduce_scatter`),
      scatter(`${p1}.moe.shared_experts.w2.tp_reduce_scatter`),
    ]);
    const bwd = tpCollectives(layerNodes(g, 'backward'));
    expect(rows(bwd.filter((n) => n.kind === 'all_reduce')).sort()).toEqual(allReduces().sort());
    expect(rows(bwd.filter((n) => n.kind !== 'all_reduce'))).toEqual([
      gather(`${p1}.moe.shared_experts.w2.bwd.tp_all_gather`),
      gather(`${p1}.moe.routed_experts.bwd.tp_all_gather`),
      scatter(`${p1}.moe.bwd.tp_reduce_scatter`), // router, routed and shared gradients summed first
      gather(`${p1}.attention.wo.bwd.tp_all_gather`),
      scatter(`${p1}.attention_norm.bwd.tp_reduce_scatter`),
    ]);
  });
});

/** Names whose weight TP leaves Replicate (sharding.py: norms, MLA's low-rank projections, the gate). */
const REPLICATED = /(norm\.weight|\.wq_a\.weight|\.wkv_a\.weight|\.router\.gate\.weight)$/;

describe('dsv3-16b parameters per rank under FSDP 4 × TP 2', () => {
  it('holds the hand-counted fp32 shard of block 1, experts split on E (EP 2) or on F (EP 1)', () => {
    const block =
      2 * D + // attention_norm, ffn_norm (replicated on tp)
      HL * QK * D + // wq colwise
      (KV_LORA + 64) * D + // wkv_a replicated
      KV_LORA + // kv_norm
      HL * (128 + V) * KV_LORA + // wkv_b colwise
      D * HL * V + // wo rowwise
      E * D + // router gate replicated
      3 * (FS / 2) * D; // shared experts
    const experts = 3 * E * F * D; // routed, over ep · efsdp = tp · dp_shard = 8 ranks either way
    for (const ep of [1, 2]) {
      const g = build(ep);
      const names = g.params.filter((p) => p.layer === 1).map((p) => p.name);
      const bytes = names.reduce((s, n) => s + g.tensors[paramTensorIds(n).shard].bytes, 0);
      expect(bytes).toBe(((block / 4 + experts / 8) * 4) / 1);
      const w1 = g.tensors[paramTensorIds(`${p1}.moe.routed_experts.inner_experts.w1_EFD`).shard].shape;
      const w2 = g.tensors[paramTensorIds(`${p1}.moe.routed_experts.inner_experts.w2_EDF`).shard].shape;
      expect([w1, w2]).toEqual(
        ep === 2
          ? [
              [8, F, D],
              [8, D, F],
            ]
          : [
              [16, F / 2, D],
              [16, D, F / 2],
            ],
      );
    }
  });

  it('sums to the model over the 8 ranks (a replicated weight counted once per tp group)', () => {
    for (const ep of [1, 2]) {
      const g = build(ep);
      const total = g.params.reduce((s, p) => {
        const shard = g.tensors[paramTensorIds(p.name).shard].shape.reduce((a, b) => a * b, 1);
        return s + (shard * 8) / (REPLICATED.test(p.name) ? 2 : 1);
      }, 0);
      expect(total).toBe(paramCount(MODEL_PRESETS['dsv3-16b']));
    }
  });

  it('FSDP-shards the experts on efsdp with EP, on dp_shard with the dense weights without', () => {
    const w1 = `${p1}.moe.routed_experts.inner_experts.w1_EFD.all_gather`;
    const wq = `${p1}.attention.wq.weight.all_gather`;
    const of = (g: StepGraph, name: string) => g.nodes.find((n) => n.name === name)!.collective!;
    expect(of(build(2), w1)).toMatchObject({ group: 'efsdp', groupSize: 4, groupStride: 2 });
    expect(of(build(1), w1)).toMatchObject({ group: 'dp_shard', groupSize: 4, groupStride: 2 });
    expect(of(build(1), wq)).toMatchObject({ group: 'dp_shard', groupSize: 4, groupStride: 2 });
  });

  it("places dsv3-671b's low-rank query as torchtitan does: wq_a and q_norm replicated, wq_b colwise", () => {
    const table = paramTable(MODEL_PRESETS['dsv3-671b']).filter((s) => s.layer === 3);
    const placed = new Map(table.map((s) => [s.name.replace('layers.3.', ''), shardParam(s, 32, 8, 1).info.tp]));
    expect(placed.get('attention.wq_a.weight')).toBeUndefined();
    expect(placed.get('attention.q_norm.weight')).toBeUndefined();
    expect(placed.get('attention.wq_b.weight')).toBe('colwise');
    expect(placed.get('attention.wkv_b.weight')).toBe('colwise');
    expect(placed.get('attention.wo.weight')).toBe('rowwise');
    expect(placed.get('moe.router.gate.weight')).toBeUndefined();
    expect(placed.get('moe.routed_experts.inner_experts.w1_EFD')).toBe('colwise');
    expect(placed.get('moe.routed_experts.inner_experts.w2_EDF')).toBe('rowwise');
    const w2 = table.find((s) => s.name.endsWith('w2_EDF'))!;
    expect(shardParam(w2, 32, 8, 1).info.localShape).toEqual([256, 7168, 2048 / 8]);
    expect(shardParam(w2, 4, 8, 8).info.localShape).toBeUndefined(); // under EP: split on E only
    expect(shardParam(w2, 4, 8, 8).rows).toBe(256 / 8);
  });
});

describe('refusals of TP on MoE models, naming the field', () => {
  const debug = MODEL_PRESETS['dsv3-debug'];
  const config = (moe: object, ep: number) => ({
    model: { ...debug, moe: { ...debug.moe!, ...moe } },
    worldSize: 8,
    batch: 1,
    seqLen: 512,
    mesh: { dpReplicate: 1, dpShard: 1, tp: 8, ep },
  });
  const fieldOf = (cfg: object): string | undefined => {
    try {
      resolveStepConfig(cfg);
      return undefined;
    } catch (e) {
      return `${(e as { field: string }).field}: ${(e as Error).message}`;
    }
  };

  it('refuses a routed F that tp does not divide without EP, takes it under EP (experts split on E)', () => {
    const odd = { moeFfnDim: 100, numSharedExperts: 2 }; // 100 % 8 ≠ 0, 200 % 8 = 0
    expect(fieldOf(config(odd, 1))).toMatch(/^mesh\.tp: .*must divide the model's moe\.moeFfnDim \(100\)/);
    expect(fieldOf(config(odd, 8))).toBeUndefined();
  });

  it("refuses shared experts' hidden dim that tp does not divide, with or without EP", () => {
    const odd = { moeFfnDim: 100, numSharedExperts: 1 };
    for (const ep of [1, 8])
      expect(fieldOf(config(odd, ep))).toMatch(/^mesh\.tp: .*moe\.moeFfnDim · moe\.numSharedExperts \(100\)/);
  });

  it('refuses tokens or heads that tp does not divide', () => {
    expect(fieldOf({ ...config({}, 2), seqLen: 511 })).toMatch(/^mesh\.tp: .*batch · seqLen \(511\)/);
    const heads = { model: 'dsv3-16b', worldSize: 32, mesh: { dpReplicate: 1, dpShard: 1, tp: 32 } };
    expect(fieldOf(heads)).toMatch(/^mesh\.tp: .*nHeads \(16\)/);
  });
});
