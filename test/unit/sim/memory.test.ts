import { describe, expect, it } from 'vitest';
import { MemoryTracker, scheduleMemoryProfile } from '../../../src/sim/memory';
import { tinyGraph } from './fixtures';

describe('scheduleMemoryProfile', () => {
  it('counts persistent bytes always, allocs at the producer, frees after the last reader', () => {
    const p = scheduleMemoryProfile(tinyGraph());
    const persistent = 40 + 100;
    expect(p.persistentBytes).toBe(persistent);
    // mm0: +h0; ag: +w.full; wait: -; mm1: +g, then h0 and w.full die; rs: +g.shard; wait: g dies
    expect(p.liveBytes).toEqual([
      persistent + 1000,
      persistent + 1000 + 200,
      persistent + 1000 + 200,
      persistent + 1000 + 200 + 400,
      persistent + 400 + 200,
      persistent + 400 + 200,
    ]);
    expect(p.peakBytes).toBe(persistent + 1600);
    expect(p.peakIndex).toBe(3);
  });

  it('raises the peak when an all-gather is issued before earlier compute (prefetch)', () => {
    const g = tinyGraph();
    const base = scheduleMemoryProfile(g).peakBytes;
    // issue the all-gather first: w.full is live during mm0 too, but the peak is still at mm1
    const early = scheduleMemoryProfile(g, [1, 0, 2, 3, 4, 5]);
    expect(early.liveBytes[1]).toBe(140 + 200 + 1000);
    expect(early.peakBytes).toBe(base);
  });

  it('keeps a reduce-scatter input alive until the wait of the collective', () => {
    const g = tinyGraph();
    const p = scheduleMemoryProfile(g);
    // g (400 B) is still live at the RS wait (position 5), the RS's end
    expect(p.liveBytes[5]).toBeGreaterThanOrEqual(140 + 400);
  });
});

describe('MemoryTracker', () => {
  it('applies frees before allocs at the same time and reports the peak', () => {
    const m = new MemoryTracker(0, 10);
    m.alloc(1, 5);
    m.free(2, 5);
    m.alloc(2, 3);
    const c = m.curve();
    expect(c.t).toEqual([0, 1, 2]);
    expect(c.bytes).toEqual([10, 15, 13]);
    expect(c.peakBytes).toBe(15);
  });
});
