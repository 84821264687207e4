// Alike ranks from the data, and the timeline folding them into one lane set standing for all.
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../../src/trace/event';
import { buildColumns, laneRedTotals, waitParts } from '../../../src/ui/timeline/columns';
import { rankLikeness, rankRangeText } from '../../../src/ui/timeline/rank_groups';
import { evOn } from '../../helpers/trace_events';

/** One rank's step: compute, an all-gather and its wait; `late` delays the collective (a late peer). */
function step(rank: number, late = 0): TraceEvent[] {
  return [
    evOn(rank, 'compute', 'compute', 0, 10),
    evOn(rank, 'comm:dp', 'all_gather', 5 + late, 10),
    evOn(rank, 'compute', 'wait', 10, 5 + late),
    evOn(rank, 'compute', 'compute', 15 + late, 10),
  ];
}

describe('rankLikeness', () => {
  it('finds ranks alike when every stream holds the same events, in any input order', () => {
    const events = [...step(2), ...step(0), ...step(1).reverse()];
    expect(rankLikeness(events)).toEqual({ ranks: [0, 1, 2], alike: true });
  });
  it('finds them unlike when one event differs in time, name or bucket', () => {
    expect(rankLikeness([...step(0), ...step(1, 1)]).alike).toBe(false);
    const renamed = step(1).map((e, i) => (i === 0 ? { ...e, name: 'other' } : e));
    expect(rankLikeness([...step(0), ...renamed]).alike).toBe(false);
    const bucketed = step(1).map((e, i) => (i === 1 ? { ...e, bucketId: 3 } : e));
    expect(rankLikeness([...step(0), ...bucketed]).alike).toBe(false);
    expect(rankLikeness([...step(0), ...step(1).slice(1)]).alike).toBe(false);
  });
  it('words rank sets', () => {
    expect(rankRangeText([0, 1, 2, 3])).toBe('r0–r3');
    expect(rankRangeText([5])).toBe('r5');
    expect(rankRangeText([0, 2])).toBe('r0, r2');
  });
});

describe('buildColumns folding', () => {
  const alike = [0, 1, 2, 3].flatMap((r) => step(r));
  it('draws alike ranks once, standing for all of them', () => {
    const c = buildColumns(alike, 8, {});
    expect(c.folded).toBe(true);
    expect(c.lanes.map((l) => l.label)).toEqual(['r0–r3 compute', 'r0–r3 comm:dp']);
    expect(c.lanes.every((l) => l.ranks.join() === '0,1,2,3')).toBe(true);
    expect(c.ranksShown).toBe(4);
  });
  it('stands for a symmetric world when told its size', () => {
    const c = buildColumns(alike, 8, { worldSize: 64 });
    expect(c.lanes[0].label).toBe('r0–r63 compute');
    expect(c.lanes[0].ranks).toHaveLength(64);
  });
  it('draws every rank when asked, or when ranks differ', () => {
    expect(buildColumns(alike).lanes).toHaveLength(8);
    const straggling = [...step(0, 4), ...step(1, 4), ...step(2), ...step(3, 4)];
    const c = buildColumns(straggling, 8, {});
    expect(c.folded).toBe(false);
    expect(c.alike).toBe(false);
    expect(c.lanes).toHaveLength(8);
    expect(c.lanes.map((l) => l.ranks)).toEqual([[0], [0], [1], [1], [2], [2], [3], [3]]);
  });
  it('draws red only where the wait is under exposed communication; the rest is a late peer', () => {
    const c = buildColumns(step(0, 9));
    const t = laneRedTotals(c);
    // compute [0,10]; wait [10,24]; the all-gather starts late at 14 (a peer) and ends at 24
    expect(c.lanes.map((l) => l.stream)).toEqual(['compute', 'comm:dp']);
    expect(t.redUs[1]).toBe(10); // the band: all-gather not under compute
    expect(t.redUs[0]).toBe(10); // the wait under it
    expect(t.peerWaitUs[0]).toBe(4); // [10,14]: no collective runs yet
    expect(waitParts(c, 2)).toEqual({ exposedUs: 10, peerUs: 4 }); // the wait's hover card says so
    expect(waitParts(c, 0)).toBeNull(); // not a wait
  });
});
