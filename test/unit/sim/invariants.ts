// Invariant checks on a SimResult, shared by the simulator tests.

import { expect } from 'vitest';
import type { StepGraph } from '../../../src/graph/types';
import type { SimResult } from '../../../src/sim';

export function expectNoOverlapPerStream(res: SimResult): void {
  const lanes = new Map<string, { start: number; dur: number; name: string }[]>();
  for (const e of res.events) {
    const k = `${e.rank}|${e.stream}`;
    if (!lanes.has(k)) lanes.set(k, []);
    lanes.get(k)!.push(e);
  }
  for (const [k, evs] of lanes) {
    const sorted = [...evs].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      const prevEnd = sorted[i - 1].start + sorted[i - 1].dur;
      if (sorted[i].start < prevEnd - 1e-9) throw new Error(`overlap on ${k}: ${sorted[i - 1].name} ends ${prevEnd} > ${sorted[i].name} starts ${sorted[i].start}`);
    }
  }
}

/** Each collective (n-th on its stream) starts at the same time on all ranks. */
export function expectCollectivesAligned(res: SimResult, worldSize: number): void {
  const byRank = new Map<number, number[]>();
  for (const e of res.events) if (e.kind === 'all_gather' || e.kind === 'reduce_scatter') {
    if (!byRank.has(e.rank)) byRank.set(e.rank, []);
    byRank.get(e.rank)!.push(e.start);
  }
  expect(byRank.size).toBe(worldSize);
  const ref = byRank.get(0)!;
  for (const starts of byRank.values()) expect(starts).toEqual(ref);
}

/** A wait never ends before its collective. */
export function expectWaitsAfterCollectives(res: SimResult, graph: StepGraph): void {
  const collEnd = new Map<string, number>();
  for (const e of res.events) if (e.kind === 'all_gather' || e.kind === 'reduce_scatter') collEnd.set(`${e.rank}|${e.name}`, e.start + e.dur);
  const waitOf = new Map(graph.nodes.filter((n) => n.kind === 'wait').map((n) => [n.name, n.waitOf!]));
  // every compute event after a wait in program order starts after the collective ended
  const pos = new Map(graph.nodes.map((n, i) => [n.name, i]));
  for (const rank of new Set(res.events.map((e) => e.rank))) {
    const compute = res.events.filter((e) => e.rank === rank && e.stream === 'compute');
    for (const [w, coll] of waitOf) {
      const end = collEnd.get(`${rank}|${coll}`);
      expect(end).toBeDefined();
      const after = compute.filter((e) => pos.get(e.name)! > pos.get(w)!);
      for (const e of after) expect(e.start).toBeGreaterThanOrEqual(end! - 1e-9);
      const wev = compute.find((e) => e.name === w);
      if (wev) expect(wev.start + wev.dur).toBeCloseTo(end!, 6);
    }
  }
}

export function sumCompute(res: SimResult, rank: number): number {
  return res.events.filter((e) => e.rank === rank && e.kind === 'compute').reduce((a, e) => a + e.dur, 0);
}
