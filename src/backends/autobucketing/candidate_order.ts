// torch's order of prefetch candidates, as positions rather than a sorted list. torch sorts the
// candidates by overlap_priority and, with prioritize_bucketing_during_scheduling, groups them by
// bucket key: groups ordered by their best member (larger groups first on ties), members by key
// within a group. The scheduler visits most candidates only to note that they are still blocked,
// which does not depend on the order, so it orders only the few whose visit can change something,
// lazily from a heap (the scan often stops at the first), and compares a blocked one with them
// only when one changes the graph (torch_scheduler.ts, scheduleCollectivesForOverlap).
// Upstream: torch/_inductor/fx_passes/overlap_scheduling.py, _get_prefetch_candidates (v2.13.0).

/** Candidates numbered 0..m-1 in registration order; `before(a, b)`: a comes first in torch's order. */
export class CandidateOrder {
  // plain arrays: a scan builds one order, and small typed arrays cost more to allocate than to read
  private readonly key: number[]; // 4 per candidate: (class, domination, -min(left, exposed), node)
  private readonly rank: number[]; // the candidate's group's place among the groups

  constructor(
    readonly candidates: readonly number[],
    fill: (c: number, k: number, key: number[]) => void,
    groupKey: ((c: number) => number) | null, // a small integer per bucket key
  ) {
    const m = candidates.length;
    this.key = new Array<number>(4 * m);
    for (let k = 0; k < m; k++) fill(candidates[k], k, this.key);
    // groups by key, first seen first (a handful of keys: a linear search beats a map)
    const keys: number[] = [];
    const best: number[] = [];
    const size: number[] = [];
    const group = new Array<number>(m);
    for (let k = 0; k < m; k++) {
      const gk = groupKey === null ? 0 : groupKey(candidates[k]);
      let g = keys.indexOf(gk);
      if (g < 0) {
        g = keys.push(gk) - 1;
        best.push(k);
        size.push(0);
      } else if (this.cmp(k, best[g]) < 0) best[g] = k;
      size[g]++;
      group[k] = g;
    }
    const byRank = keys.map((_, g) => g).sort((a, b) => this.cmp(best[a], best[b]) || size[b] - size[a]);
    const rankOf = new Array<number>(keys.length);
    byRank.forEach((g, r) => (rankOf[g] = r));
    this.rank = new Array<number>(m);
    for (let k = 0; k < m; k++) this.rank[k] = rankOf[group[k]];
  }

  /** Candidate numbers a before b in torch's order (keys end in the node, so the order is total). */
  before(a: number, b: number): boolean {
    return this.rank[a] !== this.rank[b] ? this.rank[a] < this.rank[b] : this.cmp(a, b) < 0;
  }

  /** Makes `h` a binary min-heap of candidate numbers in torch's order (in place). */
  heapify(h: number[]): void {
    for (let i = (h.length >> 1) - 1; i >= 0; i--) this.down(h, i);
  }

  /** Adds candidate k to the heap `h`. */
  push(h: number[], k: number): void {
    let i = h.push(k) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i], h[parent])) return;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  /** Removes and returns the first candidate of the heap `h` in torch's order. */
  pop(h: number[]): number {
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.down(h, 0);
    }
    return top;
  }

  private down(h: number[], i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      let m = i;
      if (l < h.length && this.before(h[l], h[m])) m = l;
      if (l + 1 < h.length && this.before(h[l + 1], h[m])) m = l + 1;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }

  private cmp(a: number, b: number): number {
    const key = this.key;
    for (let f = 0; f < 4; f++) if (key[4 * a + f] !== key[4 * b + f]) return key[4 * a + f] < key[4 * b + f] ? -1 : 1;
    return 0;
  }
}
