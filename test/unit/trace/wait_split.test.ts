// The split of a rank's waits by the metrics' own sets: the part under exposed communication
// (U_comm − U_comp) and the rest (a late peer, counted as idle), against the metrics.
import { describe, expect, it } from 'vitest';
import { exposedIntervals, rankMetrics, rankTimeSets, waitSplit } from '../../../src/trace/metrics';
import { subtract, totalLength } from '../../../src/trace/intervals';
import type { TraceEvent } from '../../../src/trace/event';
import { ev } from '../../helpers/trace_events';

describe('subtract', () => {
  it('removes b from a, both unions', () => {
    expect(
      subtract(
        [
          [0, 10],
          [20, 30],
        ],
        [
          [2, 4],
          [8, 22],
          [29, 40],
        ],
      ),
    ).toEqual([
      [0, 2],
      [4, 8],
      [22, 29],
    ]);
    expect(subtract([[0, 5]], [])).toEqual([[0, 5]]);
    expect(subtract([[0, 5]], [[0, 5]])).toEqual([]);
  });
});

describe('waitSplit', () => {
  it('splits a wait on a late peer: red while the collective runs, the rest idle', () => {
    // compute [0,10]; wait [10,30]; the all-gather starts late (peer) at 24 and ends at 30
    const events = [
      ev(0, 'compute', 0, 10),
      ev(0, 'wait', 10, 20),
      ev(0, 'all_gather', 24, 6),
      ev(0, 'compute', 30, 5),
    ];
    const t = rankTimeSets(0, events);
    const split = waitSplit(t);
    expect(split.exposed).toEqual([[24, 30]]);
    expect(split.peer).toEqual([[10, 24]]);
    const m = rankMetrics(0, events);
    expect(totalLength(split.exposed)).toBe(m.exposedCommUs);
    expect(totalLength(split.peer)).toBe(m.idleUs);
  });

  it('exposed intervals measure exactly the metric on random traces; the split partitions the waits', () => {
    let s = 7;
    const r = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (let trial = 0; trial < 20; trial++) {
      const events: TraceEvent[] = [];
      let tc = 0;
      for (let i = 0; i < 40; i++) {
        const d = 1 + Math.floor(r() * 20);
        events.push(ev(0, r() < 0.3 ? 'wait' : 'compute', tc, d));
        tc += d + Math.floor(r() * 3);
        events.push(ev(0, 'all_gather', Math.floor(r() * tc), 1 + Math.floor(r() * 15)));
      }
      const t = rankTimeSets(0, events);
      const m = rankMetrics(0, events);
      expect(totalLength(exposedIntervals(t))).toBeCloseTo(m.exposedCommUs, 9);
      const split = waitSplit(t);
      expect(totalLength(split.exposed) + totalLength(split.peer)).toBeCloseTo(totalLength(t.waits), 9);
      expect(totalLength(split.exposed)).toBeLessThanOrEqual(m.exposedCommUs + 1e-9);
    }
  });
});
