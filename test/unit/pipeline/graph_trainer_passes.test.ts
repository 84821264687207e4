// graph_trainer's optional passes in a simulated step: cudagraph_pass (on by default under
// aot_fx_trace, off under jit) takes each kernel's launch from eager to graphed, and
// compile.enable_fsdp_ag_rs_overlap (reassign_collective_pgs_pass) puts the FSDP all-gathers on a
// process group, and so a comm stream, of their own; compile.enable_fsdp_dense_region_overlap
// (schedule_fsdp_comms_to_dense_regions_pass) sinks transformer_block's FSDP reduce-scatter waits.
import { describe, expect, it } from 'vitest';
import { reassignFsdpAllGathers } from '../../../src/backends';
import {
  cudaGraphsOn,
  fsdpAgRsOverlapOn,
  fsdpDenseRegionOverlapOn,
  validateConfig,
  type SimConfig,
} from '../../../src/config';
import { HARDWARE_PRESETS } from '../../../src/estimate';
import { attentionCompanions } from '../../../src/estimate/compute';
import type { GraphNode } from '../../../src/graph';
import { buildGraph, runPipeline, type PipelineResult } from '../../../src/pipeline';
import { stepFigures } from '../../../src/pipeline/figures';
import type { TraceEvent } from '../../../src/trace';

function config(over: Record<string, unknown>): SimConfig {
  const r = validateConfig({ model: 'tiny', hardware: 'h100', ...over });
  if (!r.ok) throw r.error;
  return r.value;
}

/** Kernel launches of a run: its compute / cast events, and the eager kernels around each attention. */
function launches(r: PipelineResult, cfg: SimConfig): number {
  const byName = new Map(r.schedule.graph.nodes.map((n) => [n.name, n]));
  return r.sim.events
    .filter((e) => e.rank === 0 && e.kind === 'compute')
    .reduce((a, e) => a + 1 + attentionCompanionsOf(byName.get(e.name), cfg), 0);
}

const attentionCompanionsOf = (n: GraphNode | undefined, cfg: SimConfig) =>
  n === undefined ? 0 : attentionCompanions(n, cfg.paramDtype).launches;

describe('cudagraph_pass', () => {
  it('is on by default under aot_fx_trace, off under jit; on / off override the mode', () => {
    expect(cudaGraphsOn(config({ compileMode: 'aot_fx_trace' }))).toBe(true);
    expect(cudaGraphsOn(config({ compileMode: 'jit' }))).toBe(false);
    expect(cudaGraphsOn(config({ compileMode: 'aot_fx_trace', cudaGraphs: 'off' }))).toBe(false);
    expect(cudaGraphsOn(config({ compileMode: 'jit', cudaGraphs: 'on' }))).toBe(true);
    expect(validateConfig({ cudaGraphs: 'yes' }).ok).toBe(false);
  });

  it('shortens a one-rank step by its launches × (eager − graphed launch), on every backend', () => {
    const delta = HARDWARE_PRESETS.h100.launchUs - 0.875;
    for (const backend of ['aot_eager', 'aot_eager_autobucketing', 'transformer_block'] as const) {
      const base = { ranks: 1, compileMode: 'aot_fx_trace' };
      const on = runPipeline(config(base), backend);
      const off = runPipeline(config({ ...base, cudaGraphs: 'off' }), backend);
      expect(on.costLabel).toContain('CUDA graphs');
      expect(launches(on, config(base))).toBe(launches(off, config(base)));
      expect(off.sim.stepUs - on.sim.stepUs).toBeCloseTo(launches(on, config(base)) * delta, 6);
    }
  });

  it('leaves a jit step as it was unless asked for', () => {
    const jit = runPipeline(config({ ranks: 4 }), 'aot_eager');
    const jitOff = runPipeline(config({ ranks: 4, cudaGraphs: 'off' }), 'aot_eager');
    expect(jit.sim.stepUs).toBe(jitOff.sim.stepUs);
    expect(runPipeline(config({ ranks: 4, cudaGraphs: 'on' }), 'aot_eager').sim.stepUs).toBeLessThan(jit.sim.stepUs);
  });
});

const overlaps = (a: TraceEvent, b: TraceEvent) => a.start < b.start + b.dur && b.start < a.start + a.dur;

describe('compile.enable_fsdp_ag_rs_overlap', () => {
  // Llama3-8B on 8 ranks at 100 GB/s, memory policy eager (every block gathered again for its
  // backward): a backward all-gather issued after a long fp32 reduce-scatter queues behind it on one stream
  const slow = {
    model: 'llama3-8b',
    seqLen: 2048,
    localBatch: 1,
    ranks: 8,
    compileMode: 'aot_fx_trace',
    bandwidthGBps: 100,
    memoryPolicy: 'eager',
  };

  it('applies to aot_fx_trace graphs only, never to FSDP2 in eager mode', () => {
    const on = config({ ...slow, fsdpAgRsOverlap: true });
    expect(fsdpAgRsOverlapOn(on, 'aot_eager_autobucketing')).toBe(true);
    expect(fsdpAgRsOverlapOn(on, 'fsdp2_eager')).toBe(false);
    expect(fsdpAgRsOverlapOn({ ...on, compileMode: 'jit' }, 'aot_eager')).toBe(false);
    expect(fsdpAgRsOverlapOn({ ...on, fsdpAgRsOverlap: false }, 'aot_eager')).toBe(false);
  });

  it('moves every FSDP all-gather, and nothing else, to a group of the same ranks', () => {
    const graph = buildGraph(config({ ranks: 8, parallelism: { tensor_parallel_degree: 2 } }));
    const moved = reassignFsdpAllGathers(graph);
    expect(reassignFsdpAllGathers(graph)).toBe(moved); // cached per graph
    moved.nodes.forEach((n, i) => {
      const before = graph.nodes[i].collective;
      if (before === undefined) return expect(n).toBe(graph.nodes[i]);
      const fsdpGather = n.kind === 'all_gather' && before.group === 'dp_shard';
      expect(n.collective).toEqual(fsdpGather ? { ...before, group: 'dp_shard_ag' } : before);
    });
    expect(moved.nodes.some((n) => n.collective?.group === 'dp_shard_ag')).toBe(true);
    expect(moved.nodes.some((n) => n.kind === 'all_gather' && n.collective?.group === 'tp')).toBe(true);
  });

  for (const backend of ['aot_eager_autobucketing', 'transformer_block'] as const) {
    it(`${backend}: backward all-gathers run beside reduce-scatters on their own stream; the step ends sooner`, () => {
      const off = runPipeline(config(slow), backend);
      const on = runPipeline(config({ ...slow, fsdpAgRsOverlap: true }), backend);
      const rank0 = (evs: readonly TraceEvent[], kind: string) => evs.filter((e) => e.rank === 0 && e.kind === kind);
      const [agOff, rsOff] = [rank0(off.sim.events, 'all_gather'), rank0(off.sim.events, 'reduce_scatter')];
      expect(new Set([...agOff, ...rsOff].map((e) => e.stream))).toEqual(new Set(['comm:dp']));
      expect(agOff.some((ag) => rsOff.some((rs) => overlaps(ag, rs)))).toBe(false);
      const [agOn, rsOn] = [rank0(on.sim.events, 'all_gather'), rank0(on.sim.events, 'reduce_scatter')];
      expect(new Set(agOn.map((e) => e.stream))).toEqual(new Set(['comm:dp_ag']));
      expect(new Set(rsOn.map((e) => e.stream))).toEqual(new Set(['comm:dp']));
      expect(agOn.some((ag) => ag.start > 0 && rsOn.some((rs) => overlaps(ag, rs)))).toBe(true);
      expect(on.sim.stepUs).toBeLessThan(off.sim.stepUs);
    }, 60_000);
  }
});

describe('compile.enable_fsdp_dense_region_overlap', () => {
  // graph_trainer's default memory policy on Llama3-8B FSDP 4 × TP 2 (PR #3429's row), and eager
  // (every block gathered again) on FSDP 8: transformer_block, where graph_trainer runs the pass
  const rows = [
    { model: 'llama3-8b', ranks: 8, compileMode: 'aot_fx_trace', parallelism: { tensor_parallel_degree: 2 } },
    { model: 'llama3-8b', seqLen: 2048, ranks: 8, compileMode: 'aot_fx_trace', memoryPolicy: 'eager' },
  ];

  it('runs after transformer-block bucketing in aot_fx_trace only', () => {
    const on = config({ ...rows[0], fsdpDenseRegionOverlap: true });
    expect(fsdpDenseRegionOverlapOn(on, 'transformer_block')).toBe(true);
    for (const b of ['aot_eager', 'aot_eager_autobucketing', 'fsdp2_eager'] as const)
      expect(fsdpDenseRegionOverlapOn(on, b)).toBe(false);
    expect(fsdpDenseRegionOverlapOn({ ...on, compileMode: 'jit' }, 'transformer_block')).toBe(false);
  });

  for (const row of rows) {
    it(`${JSON.stringify(row.parallelism ?? {})} ${row.memoryPolicy ?? 'default'}: sinks every FSDP reduce-scatter ` +
      'wait to its first reader, moves nothing else, never slows the step, holds buffers longer', () => {
      const off = runPipeline(config(row), 'transformer_block');
      const on = runPipeline(config({ ...row, fsdpDenseRegionOverlap: true }), 'transformer_block');
      const [a, b] = [off.schedule.graph.nodes, on.schedule.graph.nodes];
      expect(b.map((n, i) => n.id - i).every((d) => d === 0)).toBe(true);
      const rsWait = (n: GraphNode, nodes: readonly GraphNode[]) =>
        n.kind === 'wait' &&
        nodes.find((c) => c.name === n.waitOf)?.collective?.kind === 'reduce_scatter' &&
        nodes.find((c) => c.name === n.waitOf)?.collective?.group !== 'tp';
      const movedNames = new Set(a.filter((n) => rsWait(n, a)).map((n) => n.name));
      expect(movedNames.size).toBeGreaterThan(0);
      // every other node keeps its relative order
      const rest = (nodes: readonly GraphNode[]) => nodes.filter((n) => !movedNames.has(n.name)).map((n) => n.name);
      expect(rest(b)).toEqual(rest(a));
      expect(new Set(b.map((n) => n.name))).toEqual(new Set(a.map((n) => n.name)));
      // each sunk wait sits right before the first node that reads its outputs (transformer_block alone
      // waits one block later), never after one
      const sunk = (nodes: readonly GraphNode[]) =>
        nodes.every((n, i) => {
          if (!movedNames.has(n.name)) return true;
          const reader = nodes.findIndex((r) => r.inputs.some((t) => n.outputs.includes(t)));
          const between = nodes.slice(i + 1, reader === -1 ? nodes.length : reader);
          return (reader === -1 || reader > i) && between.every((m) => movedNames.has(m.name) || m.kind === 'view');
        });
      expect(sunk(a)).toBe(false);
      expect(sunk(b)).toBe(true);
      expect(on.sim.mismatch).toBeUndefined();
      expect(on.sim.stepUs).toBeLessThanOrEqual(off.sim.stepUs);
      expect(stepFigures(on).peakReservedBytes).toBeGreaterThanOrEqual(stepFigures(off).peakReservedBytes);
    }, 60_000);
  }
});
