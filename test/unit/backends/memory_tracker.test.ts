// The backends' incremental memory tracker against src/sim's scheduleMemoryProfile (the reference).
import { describe, expect, it } from 'vitest';
import { indexGraph } from '../../../src/backends';
import { buildMemoryTables, orderMemory } from '../../../src/backends/memory_tracker';
import { AUTOBUCKETING_PROFILES, runAutobucketing } from '../../../src/backends';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { handGraph, rooflineCost } from './helpers';

describe('orderMemory', () => {
  it('matches scheduleMemoryProfile (src/sim) position by position on program order', () => {
    for (const seed of [1, 2, 3]) {
      const g = handGraph({ layers: 3, paramsPerLayer: [1, 3], seed, elementwise: true });
      const ix = indexGraph(g);
      const mine = orderMemory(
        buildMemoryTables(ix),
        Int32Array.from({ length: ix.n }, (_, i) => i),
      );
      const ref = scheduleMemoryProfile(g);
      expect(Array.from(mine.live)).toEqual(ref.liveBytes);
      expect(mine.peak).toBe(ref.peakBytes);
    }
  });

  it('matches scheduleMemoryProfile on a reordered schedule', () => {
    const g = handGraph({ layers: 4, paramsPerLayer: 2, seed: 9 });
    // torch 2.11's knobs without bucketing: the original nodes, reordered (2.13's pre-bucketing merges them)
    const torch211 = AUTOBUCKETING_PROFILES['torch-2.11'];
    const s = runAutobucketing(g, rooflineCost(), { ...torch211, collective_bucketing: false });
    const ix = indexGraph(g);
    const order = Int32Array.from(s.graph.nodes, (n) => ix.indexOfName.get(n.name)!);
    expect(orderMemory(buildMemoryTables(ix), order).peak).toBe(scheduleMemoryProfile(s.graph).peakBytes);
  });
});
