// torch's order of prefetch candidates, as positions rather than a sorted list. torch sorts the
// candidates by overlap_priority and, with prioritize_bucketing_during_scheduling, groups them by
// bucket key: groups ordered by their best member (larger groups first on ties), members by key
// within a group. The scheduler visits most candidates only to note that they are still blocked,
// which does not depend on the order, so it orders only the few whose visit can change something,
// lazily from a heap (the scan often stops at the first), and compares a blocked one with them
// only when one changes the graph (torch_scheduler.ts, scheduleCollectivesForOverlap).
// A scan runs at every compute node, so one CandidateOrder is reset per scan rather than made:
// fresh arrays per scan were a third of what the whole pass allocated.
// Upstream: torch/_inductor/fx_passes/overlap_scheduling.py, _get_prefetch_candidates (v2.13.0).

/** Fills candidate k's 4 key fields at key[4k .. 4k+4). */
export type FillKey = (c: number, k: number, key: Float64Array) => void;

/** Candidates numbered 0..m-1 in registration order; `before(a, b)`: a comes first in torch's order. */
export class CandidateOrder {
  private key = new Float64Array(64); // 4 per candidate: (class, domination, -min(left, exposed), node)
  private rank = new Int32Array(16); // the candidate's group's place among the groups
  private group = new Int32Array(16);
  private heap = new Int32Array(16); // a binary min-heap of candidate numbers in this order
  private heapLength = 0;
  // the groups of one reset, by bucket key, first seen first (a handful: a linear search beats a map)
  private readonly keys: number[] = [];
  private readonly best: number[] = [];
  private readonly size: number[] = [];
  private readonly byRank: number[] = [];
  private readonly rankOf: number[] = [];

  /** Orders candidates[0 .. m) (`groupKey`: a small integer per bucket key, null: no grouping). */
  reset(candidates: ArrayLike<number>, m: number, fill: FillKey, groupKey: ((c: number) => number) | null): this {
    this.reserve(m);
    for (let k = 0; k < m; k++) fill(candidates[k], k, this.key);
    const { keys, best, size, group, byRank, rankOf } = this;
    keys.length = best.length = size.length = 0;
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
    this.rankGroups();
    rankOf.length = byRank.length;
    for (let r = 0; r < byRank.length; r++) rankOf[byRank[r]] = r;
    for (let k = 0; k < m; k++) this.rank[k] = rankOf[group[k]];
    this.heapLength = 0;
    return this;
  }

  /** Candidate numbers a before b in torch's order (keys end in the node, so the order is total). */
  before(a: number, b: number): boolean {
    return this.rank[a] !== this.rank[b] ? this.rank[a] < this.rank[b] : this.cmp(a, b) < 0;
  }

  /** Candidates in the heap. */
  get heapSize(): number {
    return this.heapLength;
  }

  /** Puts k in the heap unordered; heapify() orders what was added so. */
  add(k: number): void {
    this.heap[this.heapLength++] = k;
  }

  /** Makes the heap a binary min-heap in torch's order. */
  heapify(): void {
    for (let i = (this.heapLength >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Adds candidate k to the ordered heap. */
  push(k: number): void {
    const h = this.heap;
    let i = this.heapLength++;
    h[i] = k;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i], h[parent])) return;
      h[i] = h[parent];
      h[parent] = k;
      i = parent;
    }
  }

  /** Removes and returns the first candidate of the heap in torch's order. */
  pop(): number {
    const h = this.heap;
    const top = h[0];
    const last = h[--this.heapLength];
    if (this.heapLength > 0) {
      h[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = this.heapLength;
    for (;;) {
      const l = 2 * i + 1;
      let m = i;
      if (l < n && this.before(h[l], h[m])) m = l;
      if (l + 1 < n && this.before(h[l + 1], h[m])) m = l + 1;
      if (m === i) return;
      const x = h[i];
      h[i] = h[m];
      h[m] = x;
      i = m;
    }
  }

  /** byRank: the groups by best member, larger first on ties (an insertion sort: a handful of groups). */
  private rankGroups(): void {
    const { best, size, byRank } = this;
    byRank.length = 0;
    for (let g = 0; g < best.length; g++) {
      let i = byRank.length;
      byRank.push(g);
      for (; i > 0; i--) {
        const o = byRank[i - 1];
        if ((this.cmp(best[g], best[o]) || size[o] - size[g]) >= 0) break;
        byRank[i] = o;
      }
      byRank[i] = g;
    }
  }

  private cmp(a: number, b: number): number {
    const key = this.key;
    for (let f = 0; f < 4; f++) if (key[4 * a + f] !== key[4 * b + f]) return key[4 * a + f] < key[4 * b + f] ? -1 : 1;
    return 0;
  }

  private reserve(m: number): void {
    if (m <= this.rank.length) return;
    const cap = Math.max(m, 2 * this.rank.length);
    this.key = new Float64Array(4 * cap);
    this.rank = new Int32Array(cap);
    this.group = new Int32Array(cap);
    this.heap = new Int32Array(cap);
  }
}
