// Metrics against hand-computed cases and a brute-force reference (count covered unit cells).
import { describe, expect, it } from 'vitest';
import { computeMetrics, rankMetrics } from '../../../src/trace/metrics';
import { intersect, totalLength, union } from '../../../src/trace/intervals';
import { rng } from '../../helpers/rng';
import type { EventKind, TraceEvent } from '../../../src/trace/event';
import { ev } from '../../helpers/trace_events';

describe('union / intersect', () => {
  it('merges overlapping and touching intervals and drops empty ones', () => {
    expect(
      union([
        [5, 7],
        [0, 2],
        [1, 3],
        [3, 4],
        [9, 9],
      ]),
    ).toEqual([
      [0, 4],
      [5, 7],
    ]);
  });
  it('intersects two unions', () => {
    expect(
      intersect(
        [
          [0, 4],
          [6, 10],
        ],
        [
          [2, 7],
          [9, 12],
        ],
      ),
    ).toEqual([
      [2, 4],
      [6, 7],
      [9, 10],
    ]);
    expect(totalLength(intersect([[0, 1]], [[1, 2]]))).toBe(0);
  });
});

describe('rankMetrics', () => {
  it('computes HTA overlap and exposure on a hand-made step', () => {
    // compute [0,10] [12,20]; comm [5,15] [18,30]; a wait [20,30] on compute (not compute time)
    const events = [
      ev(0, 'compute', 0, 10),
      ev(0, 'compute', 12, 8),
      ev(0, 'all_gather', 5, 10),
      ev(0, 'reduce_scatter', 18, 12),
      ev(0, 'wait', 20, 10),
    ];
    const m = rankMetrics(0, events);
    // |U_comp| = 10 + 8 = 18; |U_comm| = [5,15]∪[18,30] = 10 + 12 = 22
    // U_comp ∩ U_comm = [5,10] + [12,15] + [18,20] = 5 + 3 + 2 = 10
    expect(m.computeUs).toBe(18);
    expect(m.commUs).toBe(22);
    expect(m.exposedCommUs).toBe(12);
    expect(m.overlapPct).toBeCloseTo((10 / 22) * 100, 9);
    // span [0,30]; U_all = [0,30] minus nothing ([10,12] is covered by comm [5,15]) → idle 0
    expect(m.stepUs).toBe(30);
    expect(m.idleUs).toBe(0);
    expect(m.collectives).toMatchObject({ all_gather: 1, reduce_scatter: 1, all_reduce: 0 });
  });

  it('counts a gap with no kernel as idle and ignores waits', () => {
    const m = rankMetrics(0, [ev(0, 'compute', 0, 10), ev(0, 'wait', 10, 5), ev(0, 'compute', 15, 5)]);
    expect(m.computeUs).toBe(15);
    expect(m.idleUs).toBe(5);
    expect(m.commUs).toBe(0);
    expect(m.overlapPct).toBeNaN(); // HTA: 0/0 — no communication is not "0 % overlapped"
  });

  it('matches a brute-force cell count on random integer intervals', () => {
    const r = rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const events: TraceEvent[] = [];
      const n = 1 + Math.floor(r() * 12);
      for (let i = 0; i < n; i++) {
        const kinds: EventKind[] = ['compute', 'all_gather', 'reduce_scatter', 'wait'];
        events.push(ev(0, kinds[Math.floor(r() * 4)], Math.floor(r() * 50), Math.floor(r() * 15)));
      }
      // reference: cell [t, t+1) is covered by a set if any interval of the set contains it
      let comp = 0,
        comm = 0,
        both = 0,
        any = 0,
        lo = Infinity,
        hi = -Infinity;
      for (const e of events)
        if (e.kind !== 'wait' && e.dur > 0) {
          lo = Math.min(lo, e.start);
          hi = Math.max(hi, e.start + e.dur);
        }
      for (let t = 0; t < 80; t++) {
        const inSet = (k: (e: TraceEvent) => boolean) =>
          events.some((e) => k(e) && e.start <= t && t + 1 <= e.start + e.dur);
        const c = inSet((e) => e.kind === 'compute');
        const m = inSet((e) => e.kind === 'all_gather' || e.kind === 'reduce_scatter');
        comp += +c;
        comm += +m;
        both += +(c && m);
        any += +(c || m);
      }
      const got = rankMetrics(0, events);
      expect(got.computeUs).toBe(comp);
      expect(got.commUs).toBe(comm);
      expect(got.exposedCommUs).toBe(comm - both);
      expect(got.idleUs).toBe(any === 0 ? 0 : hi - lo - any);
    }
  });
});

describe('computeMetrics', () => {
  it('reports per-rank metrics, mean durations, max peak memory and the overall span', () => {
    const events = [
      ev(0, 'compute', 0, 10),
      ev(0, 'all_gather', 0, 4),
      ev(1, 'compute', 2, 10),
      ev(1, 'all_gather', 10, 6),
    ];
    const memory = [
      { rank: 0, t: [0, 5], bytes: [10, 30], peakBytes: 30 },
      { rank: 1, t: [0, 5], bytes: [10, 50], peakBytes: 50 },
    ];
    const m = computeMetrics(events, memory);
    expect(m.perRank.map((r) => r.rank)).toEqual([0, 1]);
    expect(m.perRank[1].exposedCommUs).toBe(4); // comm [10,16] ∩ comp [2,12] = 2
    expect(m.exposedCommUs).toBe((0 + 4) / 2);
    expect(m.overlapPct).toBeCloseTo(((4 + 2) / (4 + 6)) * 100, 9);
    expect(m.stepTimeUs).toBe(16); // rank 0 starts at 0, rank 1 ends at 16
    expect(m.peakMemoryBytes).toBe(50);
    expect(m.collectives).toMatchObject({ all_gather: 1, reduce_scatter: 0 });
  });
  it('returns zeros for an empty trace', () => {
    const m = computeMetrics([]);
    expect(m.stepTimeUs).toBe(0);
    expect(m.perRank).toEqual([]);
  });
});

describe('live host time (measured live runs)', () => {
  it('counts readbacks and uploads as memory copies and barrier waits as sync: non-compute GPU time, not idle', () => {
    const base = [ev(0, 'compute', 0, 10), ev(0, 'all_gather', 2, 4)];
    const host = [ev(0, 'readback', 10, 3), ev(0, 'upload', 13, 2), ev(0, 'barrier', 15, 5)];
    const without = rankMetrics(0, base);
    const withHost = rankMetrics(0, [...base, ...host]);
    expect(withHost.computeUs).toBe(without.computeUs);
    expect(withHost.nonComputeUs - without.nonComputeUs).toBe(10);
    expect(withHost.stepUs).toBe(20);
    expect(withHost.idleUs).toBe(0);
  });
});
