// Timeline columns: lanes per rank × stream, sorting, culling search, hit testing, and the
// exposed-communication intervals (comm not covered by compute), checked against brute force.

import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../../src/trace/event';
import { buildColumns, firstVisible, hitTest } from '../../../src/ui/timeline/columns';
import { exposedCommByGroup } from '../../../src/sim/group_exposure';
import { rng } from '../../helpers/rng';
import { evOn } from '../../helpers/trace_events';

function randomTrace(seed: number, ranks: number, n: number): TraceEvent[] {
  const r = rng(seed);
  const out: TraceEvent[] = [];
  for (let rank = 0; rank < ranks; rank++) {
    let tc = 0;
    let tm = 0;
    for (let i = 0; i < n; i++) {
      tc += r() * 5;
      const d = 1 + r() * 20;
      out.push(evOn(rank, 'compute', r() < 0.2 ? 'wait' : 'compute', tc, d));
      tc += d;
      tm += r() * 15;
      const dm = 1 + r() * 25;
      out.push(evOn(rank, 'comm:dp', r() < 0.5 ? 'all_gather' : 'reduce_scatter', tm, dm));
      tm += dm;
    }
  }
  return out.reverse(); // unsorted input
}

describe('buildColumns', () => {
  it('makes one lane per rank × stream, compute first, ranks ascending', () => {
    const c = buildColumns([
      evOn(1, 'comm:dp', 'all_gather', 0, 1),
      evOn(0, 'comm:dp', 'all_gather', 0, 1),
      evOn(1, 'compute', 'compute', 0, 1),
      evOn(0, 'compute', 'compute', 2, 1),
    ]);
    expect(c.lanes.map((l) => l.label)).toEqual(['r0 compute', 'r0 comm:dp', 'r1 compute', 'r1 comm:dp']);
  });

  it('keeps every event once, sorted by start within its lane', () => {
    const events = randomTrace(7, 3, 200);
    const c = buildColumns(events);
    expect(c.laneOffset[c.lanes.length]).toBe(events.length);
    expect(new Set(c.eventIndex).size).toBe(events.length);
    for (let li = 0; li < c.lanes.length; li++) {
      for (let p = c.laneOffset[li]; p < c.laneOffset[li + 1]; p++) {
        const e = events[c.eventIndex[p]];
        expect(e.rank).toBe(c.lanes[li].rank);
        expect(e.stream).toBe(c.lanes[li].stream);
        if (p > c.laneOffset[li]) expect(c.startUs[p]).toBeGreaterThanOrEqual(c.startUs[p - 1]);
      }
    }
  });

  it('caps the ranks drawn and says how many exist', () => {
    const c = buildColumns(randomTrace(1, 20, 3), 16);
    expect(c.ranksTotal).toBe(20);
    expect(c.ranksShown).toBe(16);
    expect(new Set(c.lanes.map((l) => l.rank)).size).toBe(16);
  });

  it('computes exposed comm as comm time not covered by compute (waits are not compute)', () => {
    const events = [
      evOn(0, 'compute', 'compute', 0, 10),
      evOn(0, 'compute', 'wait', 10, 5),
      evOn(0, 'compute', 'compute', 20, 10),
      evOn(0, 'comm:dp', 'all_gather', 5, 20), // [5,25): covered [5,10) and [20,25) → exposed [10,20)
      evOn(0, 'comm:dp', 'reduce_scatter', 28, 6), // [28,34): covered [28,30) → exposed [30,34)
    ];
    const c = buildColumns(events);
    const li = c.lanes.findIndex((l) => l.stream === 'comm:dp');
    const ex = [];
    for (let k = c.exposedOffset[li]; k < c.exposedOffset[li + 1]; k++)
      ex.push([c.exposedStartUs[k], c.exposedEndUs[k]]);
    expect(ex).toEqual([
      [10, 20],
      [30, 34],
    ]);
  });

  it("draws each comm lane's own exposed part on a mesh (dp, ep): the groups' exposed comm", () => {
    const events = [
      evOn(0, 'compute', 'compute', 0, 10),
      evOn(0, 'compute', 'compute', 30, 10),
      evOn(0, 'comm:dp', 'all_gather', 5, 10), // exposed [10,15)
      evOn(0, 'comm:ep', 'all_to_all', 12, 13), // exposed [12,25); [12,15) overlaps dp's
      evOn(0, 'comm:ep', 'all_to_all', 35, 10), // exposed [40,45)
    ];
    const c = buildColumns(events);
    const lane = (stream: string) => {
      const li = c.lanes.findIndex((l) => l.stream === stream);
      const ex = [];
      for (let k = c.exposedOffset[li]; k < c.exposedOffset[li + 1]; k++) {
        ex.push([c.exposedStartUs[k], c.exposedEndUs[k]]);
      }
      return ex;
    };
    expect(lane('comm:dp')).toEqual([[10, 15]]);
    expect(lane('comm:ep')).toEqual([
      [12, 25],
      [40, 45],
    ]);
    const sum = (ivs: number[][]) => ivs.reduce((t, [s, e]) => t + e - s, 0);
    expect({ dp: sum(lane('comm:dp')), ep: sum(lane('comm:ep')) }).toEqual(exposedCommByGroup(0, events));
  });

  it('exposed total matches a brute-force per-microsecond count on random traces', () => {
    const events = randomTrace(3, 2, 100).map((e) => ({
      ...e,
      start: Math.round(e.start),
      dur: Math.max(1, Math.round(e.dur)),
    }));
    const c = buildColumns(events);
    for (const rank of [0, 1]) {
      const li = c.lanes.findIndex((l) => l.rank === rank && l.stream !== 'compute');
      let total = 0;
      for (let k = c.exposedOffset[li]; k < c.exposedOffset[li + 1]; k++)
        total += c.exposedEndUs[k] - c.exposedStartUs[k];
      const end = Math.max(...events.map((e) => e.start + e.dur));
      let brute = 0;
      for (let t = 0; t < end; t++) {
        const inside = (k: (e: TraceEvent) => boolean) =>
          events.some((e) => e.rank === rank && k(e) && e.start <= t && t < e.start + e.dur);
        if (
          inside((e) => e.kind === 'all_gather' || e.kind === 'reduce_scatter') &&
          !inside((e) => e.kind === 'compute')
        )
          brute++;
      }
      expect(total).toBe(brute);
    }
  });
});

describe('buildColumns at scale', () => {
  it('keeps 200k disjoint exposed intervals on one comm lane (no argument-spread limit)', () => {
    const events: TraceEvent[] = [];
    for (let i = 0; i < 200_000; i++)
      events.push(evOn(0, 'comm:dp', i % 2 ? 'all_gather' : 'reduce_scatter', 2 * i, 1));
    const c = buildColumns(events);
    expect(c.exposedOffset[1] - c.exposedOffset[0]).toBe(200_000);
    expect(c.exposedStartUs[199_999]).toBe(399_998);
    expect(c.exposedEndUs[199_999]).toBe(399_999);
  });
});

describe('firstVisible', () => {
  it('returns the first event of the lane that ends after t', () => {
    const events = randomTrace(11, 1, 300);
    const c = buildColumns(events);
    for (const t of [0, 50, 333.3, 1000, 1e9]) {
      for (let li = 0; li < c.lanes.length; li++) {
        const p = firstVisible(c, li, t);
        let brute = c.laneOffset[li + 1];
        for (let q = c.laneOffset[li]; q < c.laneOffset[li + 1]; q++) {
          if (c.maxEndUs[q] > t) {
            brute = q;
            break;
          }
        }
        expect(p).toBe(brute);
      }
    }
  });
});

describe('hitTest', () => {
  it('finds the event under a time and -1 in a gap', () => {
    const events = [evOn(0, 'compute', 'compute', 0, 10, 'a'), evOn(0, 'compute', 'compute', 20, 10, 'b')];
    const c = buildColumns(events);
    expect(events[hitTest(c, 0, 25, 0)].name).toBe('b');
    expect(events[hitTest(c, 0, 5, 0)].name).toBe('a');
    expect(hitTest(c, 0, 15, 1)).toBe(-1);
    expect(events[hitTest(c, 0, 11, 2)].name).toBe('a');
    expect(hitTest(c, 5, 5, 0)).toBe(-1);
  });
});
