// Invariant checks on a SimResult, shared by the simulator tests.

import { group } from 'd3-array';
import { expect } from 'vitest';
import type { Mesh } from '../../../src/graph';
import type { StepGraph } from '../../../src/graph/types';
import { groupInstanceOf } from '../../helpers/meshes';
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
      if (sorted[i].start < prevEnd - 1e-9)
        throw new Error(
          `overlap on ${k}: ${sorted[i - 1].name} ends ${prevEnd} > ${sorted[i].name} starts ${sorted[i].start}`,
        );
    }
  }
}

/** Each collective (n-th on its stream) starts at the same time on all ranks. */
export function expectCollectivesAligned(res: SimResult, worldSize: number): void {
  const byRank = new Map<number, number[]>();
  for (const e of res.events)
    if (e.kind === 'all_gather' || e.kind === 'reduce_scatter') {
      if (!byRank.has(e.rank)) byRank.set(e.rank, []);
      byRank.get(e.rank)!.push(e.start);
    }
  expect(byRank.size).toBe(worldSize);
  const ref = byRank.get(0)!;
  for (const starts of byRank.values()) expect(starts).toEqual(ref);
}

/**
 * On a mesh: each collective (the n-th on its group's stream) starts at the same time on every
 * rank of its group instance (on a 1-D mesh: every rank), for every group, all-reduces included.
 */
export function expectCollectivesAlignedInGroups(res: SimResult, worldSize: number, mesh: Mesh): void {
  const starts = new Map<string, Map<number, number[]>>(); // stream|instance → rank → starts
  for (const e of res.events) {
    if (e.kind !== 'all_gather' && e.kind !== 'reduce_scatter' && e.kind !== 'all_reduce') continue;
    const key = `${e.stream}|${groupInstanceOf(mesh, e.stream.slice('comm:'.length), e.rank, worldSize)}`;
    const byRank = starts.get(key) ?? new Map<number, number[]>();
    starts.set(key, byRank);
    const list = byRank.get(e.rank);
    if (list) list.push(e.start);
    else byRank.set(e.rank, [e.start]);
  }
  expect(new Set([...starts.values()].flatMap((m) => [...m.keys()])).size).toBe(worldSize);
  for (const [key, byRank] of starts) {
    const [ref, ...rest] = [...byRank.values()];
    for (const s of rest) expect(s, key).toEqual(ref);
  }
}

/** A wait never ends before its collective, and nothing after a wait starts before the collective ends. */
export function expectWaitsAfterCollectives(res: SimResult, graph: StepGraph): void {
  const collEnd = new Map<string, number>();
  for (const e of res.events)
    if (e.kind === 'all_gather' || e.kind === 'reduce_scatter' || e.kind === 'all_reduce')
      collEnd.set(`${e.rank}|${e.name}`, e.start + e.dur);
  for (const rank of new Set(res.events.map((e) => e.rank))) {
    const onCompute = res.events.filter((e) => e.rank === rank && e.stream === 'compute');
    const computeByName = new Map(onCompute.map((e) => [e.name, e]));
    // a bucket's copy kernels run on the compute stream: `<collective>.copy_in` before it is issued,
    // `<wait>.copy_out.<k>` after the wait
    const endOf = (names: readonly string[]) =>
      Math.max(
        0,
        ...names.map((x) => {
          const e = computeByName.get(x);
          return e ? e.start + e.dur : 0;
        }),
      );
    const copyOuts = group(
      onCompute.filter((e) => /\.copy_out\.\d+$/.test(e.name)),
      (e) => e.name.replace(/\.copy_out\.\d+$/, ''),
    );
    let mustStartAfter = 0; // the latest collective end among waits passed in program order
    let streamEnd = 0; // where the compute stream is: the end of its latest event so far
    for (const n of graph.nodes) {
      const ev = computeByName.get(n.name);
      streamEnd = Math.max(streamEnd, endOf([`${n.name}.copy_in`]));
      if (n.kind === 'wait') {
        const end = collEnd.get(`${rank}|${n.waitOf}`);
        expect(end, `collective of ${n.name} on rank ${rank}`).toBeDefined();
        // a wait that blocked ends with its collective; one with no event found it over already
        if (ev) expect(ev.start + ev.dur, `${n.name} on rank ${rank}`).toBeCloseTo(end!, 6);
        else expect(end!, `${n.name} on rank ${rank}: ended before the wait`).toBeLessThanOrEqual(streamEnd + 1e-6);
        mustStartAfter = Math.max(mustStartAfter, end!);
      } else if (ev) expect(ev.start).toBeGreaterThanOrEqual(mustStartAfter - 1e-9);
      if (ev) streamEnd = ev.start + ev.dur;
      streamEnd = Math.max(streamEnd, endOf((copyOuts.get(n.name) ?? []).map((e) => e.name)));
    }
  }
}

export function sumCompute(res: SimResult, rank: number): number {
  return res.events.filter((e) => e.rank === rank && e.kind === 'compute').reduce((a, e) => a + e.dur, 0);
}
