// CandidateOrder: torch's prefetch-candidate order (overlap_priority, grouped by bucket key) as
// positions; checked against a direct transcription of torch's sort on random candidate sets.
import { describe, expect, it } from 'vitest';
import { CandidateOrder } from '../../../src/backends/autobucketing/candidate_order';
import { rng } from '../../helpers/rng';

type Cand = { node: number; key: [number, number, number, number]; group: number };

/** torch: sort by key; group by bucket key (first seen first); groups by best member, larger first on ties. */
function torchOrder(cands: Cand[], grouped: boolean): number[] {
  const lt = (a: Cand, b: Cand) => {
    for (let f = 0; f < 4; f++) if (a.key[f] !== b.key[f]) return a.key[f] - b.key[f];
    return 0;
  };
  const sorted = [...cands].sort(lt);
  if (!grouped) return sorted.map((c) => c.node);
  const groups = new Map<number, Cand[]>();
  for (const c of sorted) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
  const byBest = [...groups.values()].sort((a, b) => lt(a[0], b[0]) || b.length - a.length);
  return byBest.flatMap((g) => g.map((c) => c.node));
}

function randomCands(r: () => number, m: number): Cand[] {
  const nodes = new Set<number>();
  while (nodes.size < m) nodes.add(Math.floor(r() * 10 * m));
  return [...nodes].map((node) => ({
    node,
    // few distinct values per field, so ties fall through to the next field and to the node
    key: [Math.floor(r() * 4), Math.floor(r() * 5), -Math.floor(r() * 3) * 0.25, node],
    group: Math.floor(r() * 4),
  }));
}

/** Every candidate number of `order` in the order its heap hands them out. */
function drain(order: CandidateOrder, ks: number[]): number[] {
  for (const k of ks) order.add(k);
  order.heapify();
  const out: number[] = [];
  while (order.heapSize > 0) out.push(order.pop());
  return out;
}

/** A CandidateOrder of `cands`, reset on the one reused order (as the scheduler reuses it per scan). */
const REUSED = new CandidateOrder();
function orderOf(cands: Cand[], grouped: boolean): CandidateOrder {
  return REUSED.reset(
    cands.map((c) => c.node),
    cands.length,
    (_c, k, key) => key.set(cands[k].key, 4 * k),
    grouped ? (c) => cands.find((x) => x.node === c)!.group : null,
  );
}

describe('CandidateOrder', () => {
  it.each([true, false])('heapify + pop hand out torch order (grouped by bucket key: %s), 200 sets', (grouped) => {
    const r = rng(grouped ? 11 : 12);
    for (let trial = 0; trial < 200; trial++) {
      const cands = randomCands(r, 1 + Math.floor(r() * 60));
      const order = orderOf(cands, grouped);
      const all = drain(
        order,
        cands.map((_, k) => k),
      ).map((k) => cands[k].node);
      expect(all).toEqual(torchOrder(cands, grouped));
      // before() is that order, pairwise
      const pos = new Map(all.map((node, i) => [node, i]));
      for (let a = 0; a < Math.min(cands.length, 8); a++)
        for (let b = 0; b < cands.length; b++)
          expect(order.before(a, b)).toBe(pos.get(cands[a].node)! < pos.get(cands[b].node)!);
    }
  });

  it('push keeps the heap: candidates pushed while popping come out in order among the rest', () => {
    const r = rng(5);
    for (let trial = 0; trial < 100; trial++) {
      const cands = randomCands(r, 2 + Math.floor(r() * 50));
      const order = orderOf(cands, true);
      const full = drain(
        order,
        cands.map((_, k) => k),
      );
      const late = new Set(full.filter(() => r() < 0.4));
      for (const k of full.filter((k) => !late.has(k)).reverse()) order.add(k);
      order.heapify();
      // the late ones join after the first pop (as the scan adds re-examined candidates)
      const out = [order.pop()];
      for (const k of late) if (order.before(out[0], k)) order.push(k);
      while (order.heapSize > 0) out.push(order.pop());
      expect(out).toEqual(full.filter((k) => !late.has(k) || order.before(out[0], k)));
    }
  });
});
