// fastMemoryCurve: the simulator's dense memory curve equals the reference rules
// (tensorLifetimes + MemoryTracker) on real step graphs with random, tie-heavy timings, partial
// runs (a rank that stopped) and collectives that never ended (NaN end → end of step).
import { describe, expect, it } from 'vitest';
import { buildStepGraph } from '../../../src/graph';
import type { StepGraph } from '../../../src/graph/types';
import { MemoryTracker, persistentBytes, tensorLifetimes } from '../../../src/sim/memory';
import { fastMemoryCurve } from '../../../src/sim/memory_curve';
import { rng } from '../../helpers/rng';

function reference(graph: StepGraph, count: number, startUs: Float64Array, endUs: Float64Array, endOfStep: number) {
  const ran = graph.nodes.slice(0, count);
  const lifetimes = tensorLifetimes(
    graph,
    ran,
    (i) => startUs[i],
    (i) => (Number.isNaN(endUs[i]) ? endOfStep : endUs[i]),
  );
  const tracker = new MemoryTracker(3, persistentBytes(graph));
  for (const iv of lifetimes.values()) {
    tracker.alloc(iv.alloc, iv.bytes);
    tracker.free(iv.free, iv.bytes);
  }
  return tracker.curve();
}

describe('fastMemoryCurve', () => {
  it('matches tensorLifetimes + MemoryTracker on random timings with many equal times', () => {
    for (const [model, seed] of [
      ['tiny', 1],
      ['small', 2],
      ['tiny', 3],
    ] as const) {
      const graph = buildStepGraph({ model, worldSize: 4 });
      const n = graph.nodes.length;
      const r = rng(seed);
      for (const count of [n, Math.floor(n / 3)]) {
        const startUs = new Float64Array(n);
        const endUs = new Float64Array(n);
        let t = 0;
        for (let i = 0; i < n; i++) {
          t += Math.floor(r() * 3); // 0 often: equal times
          startUs[i] = t;
          endUs[i] = r() < 0.05 ? Number.NaN : t + Math.floor(r() * 40);
        }
        const endOfStep = t + 50;
        const fast = fastMemoryCurve(3, graph.tensors, graph.nodes, count, startUs, endUs, endOfStep);
        expect(fast).toStrictEqual(reference(graph, count, startUs, endUs, endOfStep));
      }
    }
  });
});
