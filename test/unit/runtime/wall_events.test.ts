// The measured timeline of a live step: each rank's phase intervals become trace events — kernels on
// the compute stream, collectives on their group's comm stream, readback / upload / barrier as kinds
// of their own — in µs, sorted by rank then start.
import { describe, expect, it } from 'vitest';
import { planTraining } from '../../../src/runtime/training_plan';
import { wallEvents } from '../../../src/runtime/wall_events';
import type { PhaseInterval } from '../../../src/runtime/exec';

const plan = planTraining({
  model: 'tiny',
  ranks: 2,
  steps: 1,
  backend: 'aot_eager_autobucketing',
  seed: 0,
  kernels: 'cpu',
  collective: 'direct',
  timing: 'measured',
  hardware: 'h100',
});
const ag = plan.schedule.graph.nodes.find((n) => n.kind === 'all_gather');
const rs = plan.schedule.graph.nodes.find((n) => n.kind === 'reduce_scatter');

describe('wallEvents', () => {
  it('maps every phase to its kind and stream, in µs, rank by rank in start order', () => {
    if (ag === undefined || rs === undefined) throw new Error('the tiny schedule has no collectives');
    const r0: PhaseInterval[] = [
      { phase: 'collective', name: ag.name, startMs: 1, durMs: 2 },
      { phase: 'readback', name: 'x', startMs: 1.1, durMs: 0.2 },
      { phase: 'barrier', name: 'barrier', startMs: 1.5, durMs: 1 },
      { phase: 'compute', name: 'matmul', startMs: 0, durMs: 1 },
    ];
    const r1: PhaseInterval[] = [
      { phase: 'collective', name: rs.name, startMs: 0.5, durMs: 1 },
      { phase: 'upload', name: 'tokens', startMs: 0, durMs: 0.25 },
      { phase: 'compile', name: 'compile matmul', startMs: 2, durMs: 3 },
    ];
    const ev = wallEvents(plan.schedule.graph, [r0, r1]);
    expect(ev.map((e) => [e.rank, e.stream, e.kind, e.start, e.dur])).toEqual([
      [0, 'compute', 'compute', 0, 1000],
      [0, `comm:${ag.collective?.group}`, 'all_gather', 1000, 2000],
      [0, 'compute', 'readback', 1100, 200],
      [0, 'compute', 'barrier', 1500, 1000],
      [1, 'compute', 'upload', 0, 250],
      [1, `comm:${rs.collective?.group}`, 'reduce_scatter', 500, 1000],
      [1, 'compute', 'compute', 2000, 3000], // compilation blocks the compute stream
    ]);
  });

  it('drops a collective interval the graph does not know and skips ranks that sent none', () => {
    const ev = wallEvents(plan.schedule.graph, [
      undefined,
      [{ phase: 'collective', name: 'no such node', startMs: 0, durMs: 1 }],
    ]);
    expect(ev).toEqual([]);
  });
});
