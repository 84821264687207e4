// torchtitan's parallelism.fsdp_reshard_after_forward and graph_trainer's joint graph
// (compile.mode aot_fx_trace, compile.memory_policy) in the step graph: which parameters the
// backward gathers again, what it recomputes, and how long a kept gathered parameter lives.
import { describe, expect, it } from 'vitest';
import { runBackend } from '../../../src/backends';
import { activationCheckpointingOf, configToQuery, validateConfig } from '../../../src/config';
import { configFromQuery } from '../../../src/config/url';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph, recomputePlan, reshardsAfterForward, type StepConfig } from '../../../src/graph';
import { isRecomputeNode } from '../../../src/graph/checkpoint';
import { verifyGraph } from '../../../src/graph/verify';
import type { GraphNode, StepGraph } from '../../../src/graph/types';
import { scheduleMemoryProfile, liveIntervals } from '../../../src/sim/memory';

const tiny = (extra: Partial<StepConfig> = {}): StepGraph => buildStepGraph({ model: 'tiny', worldSize: 4, ...extra });
const mesh2d = (extra: Partial<StepConfig> = {}): StepGraph =>
  buildStepGraph({ model: 'tiny', worldSize: 4, mesh: { dpReplicate: 1, dpShard: 2, tp: 2 }, ...extra });

const isGather = (n: GraphNode) => n.kind === 'all_gather' && n.collective?.group !== 'tp';
const bwdGathers = (g: StepGraph) => g.nodes.filter((n) => n.phase === 'backward' && isGather(n));
const fwdGathers = (g: StepGraph) => g.nodes.filter((n) => n.phase === 'forward' && isGather(n));
const paramsOf = (ns: readonly GraphNode[]) => new Set(ns.flatMap((n) => n.params ?? []));

describe('reshardAfterForward', () => {
  it("resolves as torchtitan's get_fsdp_reshard_after_forward_policy: default reshards unless PP", () => {
    expect(reshardsAfterForward('default')).toBe(true);
    expect(reshardsAfterForward('default', true)).toBe(false);
    expect(reshardsAfterForward('always', true)).toBe(true);
    expect(reshardsAfterForward('never')).toBe(false);
  });

  it('default and always build the same graph: every parameter the backward reads is gathered again', () => {
    const g = tiny();
    expect(JSON.stringify(tiny({ reshardAfterForward: 'always' }))).toBe(JSON.stringify(g));
    // tok_embeddings' backward reads only the ids
    const read = [...paramsOf(fwdGathers(g))].filter((p) => p !== 'tok_embeddings.weight');
    expect(paramsOf(bwdGathers(g))).toEqual(new Set(read));
  });

  for (const ac of ['none', 'selective', 'full'] as const) {
    it(`never (AC ${ac}): no backward all-gather; each backward weight read is the forward's gathered one`, () => {
      const g = tiny({ reshardAfterForward: 'never', activationCheckpointing: ac });
      expect(verifyGraph(g)).toBe(g);
      expect(bwdGathers(g)).toHaveLength(0);
      expect(fwdGathers(g)).toHaveLength(fwdGathers(tiny({ activationCheckpointing: ac })).length);
      const fwdFull = new Set(fwdGathers(g).map((n) => g.nodes.find((w) => w.waitOf === n.name)!.outputs[0]));
      const bwd = g.nodes.filter((n) => n.phase === 'backward');
      const reads = bwd.flatMap((n) => n.inputs).filter((t) => t.endsWith('.full'));
      expect(reads.length).toBeGreaterThan(0);
      for (const t of reads) expect(fwdFull.has(t), t).toBe(true);
      expect(g.nodes.some(isRecomputeNode)).toBe(ac !== 'none');
    });
  }

  it('never keeps a gathered parameter live from its forward all-gather to its last backward use', () => {
    const g = tiny({ reshardAfterForward: 'never' });
    const live = liveIntervals(g, g.nodes);
    const ag = g.nodes.find((n) => n.name === 'layers.0.attention.wq.weight.all_gather')!;
    const readers = g.nodes.filter((n) => n.inputs.includes('layers.0.attention.wq.weight.full'));
    const lastRead = Math.max(...readers.map((n) => n.id));
    expect(g.nodes[lastRead].phase).toBe('backward');
    expect(live.get(ag.outputs[0])).toMatchObject({ alloc: ag.id, free: lastRead });
    // resharded, the forward copy dies in the forward
    const r = tiny();
    const rFree = liveIntervals(r, r.nodes).get('layers.0.attention.wq.weight.all_gather')!.free;
    expect(r.nodes[rFree].phase).toBe('forward');
    expect(scheduleMemoryProfile(g).peakBytes).toBeGreaterThan(scheduleMemoryProfile(r).peakBytes);
  });

  it('never on a mesh: no dp_shard all-gather in the backward, the tp ones stay', () => {
    const g = mesh2d({ reshardAfterForward: 'never', activationCheckpointing: 'selective' });
    expect(bwdGathers(g)).toHaveLength(0);
    const tpGather = (n: GraphNode) =>
      n.phase === 'backward' && n.collective?.group === 'tp' && n.kind === 'all_gather';
    expect(g.nodes.some(tpGather)).toBe(true);
  });
});

describe('compileMode aot_fx_trace (one joint graph) and its memory policies', () => {
  const joint = (memoryPolicy: StepConfig['memoryPolicy'], extra: Partial<StepConfig> = {}) =>
    mesh2d({ compileMode: 'aot_fx_trace', memoryPolicy, ...extra });

  it('marks the graph joint; jit graphs keep their JSON as it was', () => {
    expect(joint('default').meta.jointGraph).toBe(true);
    expect('jointGraph' in mesh2d().meta).toBe(false);
  });

  it('none: the traced graph as it is — no recompute, no re-gather, whatever the reshard policy', () => {
    for (const reshardAfterForward of ['default', 'never'] as const) {
      const g = joint('none', { reshardAfterForward });
      expect(g.nodes.some(isRecomputeNode)).toBe(false);
      expect(bwdGathers(g)).toHaveLength(0);
    }
  });

  it("default: graph SAC re-gathers a block's parameters (only inside blocks), kept when reshard is never", () => {
    const g = joint('default');
    expect(paramsOf(bwdGathers(g)).has('norm.weight')).toBe(false);
    expect(paramsOf(bwdGathers(g)).has('output.weight')).toBe(false);
    expect([...paramsOf(bwdGathers(g))].every((p) => p.startsWith('layers.'))).toBe(true);
    expect(bwdGathers(g).length).toBe(2 * 9); // tiny: 2 blocks of 9 weights
    expect(bwdGathers(joint('default', { reshardAfterForward: 'never' }))).toHaveLength(0);
  });

  it('default saves every mm output (eager op SAC recomputes every second one): fewer recomputed matmuls', () => {
    const mms = (g: StepGraph) => g.nodes.filter((n) => isRecomputeNode(n) && n.op === 'matmul').length;
    const eager = joint('eager');
    expect(mms(joint('default'))).toBe(0);
    expect(mms(eager)).toBeGreaterThan(0);
    expect(mms(eager)).toBe(mms(mesh2d({ activationCheckpointing: 'selective' })));
  });

  it('full and eager re-gather even with reshard never (graph_trainer reads the policy only under default)', () => {
    for (const p of ['full', 'eager'] as const) {
      expect(bwdGathers(joint(p, { reshardAfterForward: 'never' })).length, p).toBe(18);
    }
  });

  it('runs the autobucketing pass once over forward and backward (twice for a jit graph)', () => {
    const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
    const split = runBackend('aot_eager_autobucketing', mesh2d(), cost).passStats ?? [];
    const one = runBackend('aot_eager_autobucketing', joint('none'), cost).passStats ?? [];
    expect(split.map((p) => p.phase)).toEqual(['forward', 'backward']);
    expect(one.map((p) => p.phase)).toEqual(['forward+backward']);
  });

  it('plans from the knobs: jit reads activation_checkpoint.mode, aot_fx_trace the memory policy', () => {
    const base = {
      compileMode: 'jit',
      reshardAfterForward: 'never',
      memoryPolicy: 'full',
      activationCheckpointing: 'none',
    } as const;
    expect(recomputePlan(base)).toMatchObject({ activationCheckpointing: 'none', regatherBlocks: false, joint: false });
    expect(recomputePlan({ ...base, compileMode: 'aot_fx_trace' })).toMatchObject({
      activationCheckpointing: 'full',
      regatherBlocks: true,
      regatherOutside: false,
      joint: true,
    });
  });
});

describe('config fields', () => {
  it('validates each field by name with its allowed values', () => {
    const cases = [
      ['reshardAfterForward', 'sometimes', 'default, always, never'],
      ['compileMode', 'aot', 'jit, aot_fx_trace'],
      ['memoryPolicy', 'most', 'default, full, eager, sac_and_offload, none'],
    ] as const;
    for (const [field, bad, allowed] of cases) {
      const r = validateConfig({ [field]: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.field).toBe(field);
        expect(r.error.message).toContain(allowed);
      }
    }
    const allowed = /memoryPolicy.*default, full, eager, sac_and_offload, none/;
    expect(() => tiny({ memoryPolicy: 'most' as never })).toThrow(allowed);
  });

  it("refuses a policy graph_trainer's configs.py does not take, from a URL too, naming the allowed values", () => {
    // cpu_offload_all: graph_trainer's README example, which its memory_policy Literal no longer accepts
    const r = configFromQuery('compileMode=aot_fx_trace&memoryPolicy=cpu_offload_all');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.field).toBe('memoryPolicy');
      expect(r.error.message).toMatch(/cpu_offload_all/);
      expect(r.error.message).toContain('default, full, eager, sac_and_offload, none');
    }
  });

  it('round-trips through the URL', () => {
    const cfg = validateConfig({ reshardAfterForward: 'never', compileMode: 'aot_fx_trace', memoryPolicy: 'none' });
    if (!cfg.ok) throw cfg.error;
    const q = configToQuery(cfg.value);
    expect(q).toBe('reshardAfterForward=never&compileMode=aot_fx_trace&memoryPolicy=none');
    const back = configFromQuery(q);
    expect(back.ok && back.value).toEqual(cfg.value);
  });
});

describe('activationCheckpointingOf', () => {
  it("is the memory policy's recompute under aot_fx_trace (graph_trainer reads no activation_checkpoint.mode)", () => {
    const cfg = { model: 'llama3-8b', activationCheckpointing: 'selective', compileMode: 'aot_fx_trace' } as const;
    expect(activationCheckpointingOf({ ...cfg, memoryPolicy: 'none' })).toBe('none');
    expect(activationCheckpointingOf({ ...cfg, memoryPolicy: 'full' })).toBe('full');
    expect(activationCheckpointingOf({ ...cfg, compileMode: 'jit', memoryPolicy: 'none' })).toBe('selective');
  });
});
