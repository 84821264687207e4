// Memory budget of prefetching (torch OverlapScheduler._prefetch_would_exceed_memory_budget):
// a collective prefetched at compute index i and first needed at compute index j keeps its
// buffers live over [i, j). Per compute index we track the baseline (max live bytes of the
// original order since the previous compute node) plus the cumulative prefetched bytes, and
// refuse a prefetch that would push either the cumulative prefetch past max_in_flight bytes or
// baseline + prefetch past the allowed peak. A lazy segment tree makes each check and update
// O(log C) instead of torch's O(C) scan.

/** Range add / range max over [0, size) for two series that receive the same adds: cum and base+cum. */
export class PrefetchBudget {
  private readonly size: number;
  private readonly maxCum: Float64Array;
  private readonly maxTotal: Float64Array;
  private readonly lazy: Float64Array;

  constructor(baseline: ArrayLike<number>) {
    this.size = Math.max(1, baseline.length);
    this.maxCum = new Float64Array(4 * this.size);
    this.maxTotal = new Float64Array(4 * this.size).fill(-Infinity);
    this.lazy = new Float64Array(4 * this.size);
    if (baseline.length > 0) this.build(1, 0, this.size - 1, baseline);
  }

  private build(node: number, lo: number, hi: number, base: ArrayLike<number>): void {
    if (lo === hi) {
      this.maxTotal[node] = base[lo];
      return;
    }
    const mid = (lo + hi) >> 1;
    this.build(2 * node, lo, mid, base);
    this.build(2 * node + 1, mid + 1, hi, base);
    this.maxTotal[node] = Math.max(this.maxTotal[2 * node], this.maxTotal[2 * node + 1]);
  }

  private apply(node: number, v: number): void {
    this.maxCum[node] += v;
    this.maxTotal[node] += v;
    this.lazy[node] += v;
  }

  private push(node: number): void {
    const v = this.lazy[node];
    if (v !== 0) {
      this.apply(2 * node, v);
      this.apply(2 * node + 1, v);
      this.lazy[node] = 0;
    }
  }

  /** Adds `bytes` to every compute index in [from, to). */
  add(from: number, to: number, bytes: number): void {
    if (from >= to) return;
    this.addRec(1, 0, this.size - 1, from, to - 1, bytes);
  }

  private addRec(node: number, lo: number, hi: number, a: number, b: number, v: number): void {
    if (b < lo || hi < a) return;
    if (a <= lo && hi <= b) {
      this.apply(node, v);
      return;
    }
    this.push(node);
    const mid = (lo + hi) >> 1;
    this.addRec(2 * node, lo, mid, a, b, v);
    this.addRec(2 * node + 1, mid + 1, hi, a, b, v);
    this.maxCum[node] = Math.max(this.maxCum[2 * node], this.maxCum[2 * node + 1]);
    this.maxTotal[node] = Math.max(this.maxTotal[2 * node], this.maxTotal[2 * node + 1]);
  }

  /** [max cumulative prefetch, max baseline + prefetch] over compute indices [from, to). */
  query(from: number, to: number): [number, number] {
    if (from >= to) return [-Infinity, -Infinity];
    const out: [number, number] = [-Infinity, -Infinity];
    this.queryRec(1, 0, this.size - 1, from, to - 1, out);
    return out;
  }

  private queryRec(node: number, lo: number, hi: number, a: number, b: number, out: [number, number]): void {
    if (b < lo || hi < a) return;
    if (a <= lo && hi <= b) {
      if (this.maxCum[node] > out[0]) out[0] = this.maxCum[node];
      if (this.maxTotal[node] > out[1]) out[1] = this.maxTotal[node];
      return;
    }
    this.push(node);
    const mid = (lo + hi) >> 1;
    this.queryRec(2 * node, lo, mid, a, b, out);
    this.queryRec(2 * node + 1, mid + 1, hi, a, b, out);
  }
}
