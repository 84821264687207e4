// Static reachability to and from a set of target nodes (collective starts and waits): the
// questions torch answers with its BitsetAncestors, for the targets the pass asks about. Targets
// get one bit each, 32 per chunk; one sweep per chunk over a topological order fills a word per
// node, only over the part of the order its targets can reach: O(targets/32 · edges) time and
// O(targets/32 · nodes) words, instead of nodes². The pass asks mostly about nodes near each
// other, so a chunk's first questions are answered by a backward search bounded below by the
// ancestor's position in the order, and its sweep is made only once it is asked often; past
// MAX_WORDS (very long graphs) every question is such a search.
// Upstream: torch/_inductor/fx_passes/utils.py (BitsetAncestors).

export interface Dag {
  readonly n: number;
  /** CSR parents of node x: parIdx[parOff[x] .. parOff[x+1]) (any order, duplicates allowed). */
  readonly parOff: Int32Array;
  readonly parIdx: Int32Array;
  /** A topological order of all n nodes. */
  readonly order: ArrayLike<number>;
}

/** CSR parents of `n` nodes: the graph's plus extra ones per node. */
export function withExtraParents(
  n: number,
  parOff: Int32Array,
  parIdx: Int32Array,
  extra: ReadonlyMap<number, readonly number[]>,
): { parOff: Int32Array; parIdx: Int32Array } {
  const off = new Int32Array(n + 1);
  for (let x = 0; x < n; x++) off[x + 1] = off[x] + parOff[x + 1] - parOff[x] + (extra.get(x)?.length ?? 0);
  const idx = new Int32Array(off[n]);
  for (let x = 0; x < n; x++) {
    idx.set(parIdx.subarray(parOff[x], parOff[x + 1]), off[x]);
    const e = extra.get(x);
    if (e) idx.set(e, off[x] + parOff[x + 1] - parOff[x]);
  }
  return { parOff: off, parIdx: idx };
}

/** Bitset words above which questions are answered by bounded searches (128 MiB). */
const MAX_WORDS = 32 * 2 ** 20;

/**
 * Questions about a chunk answered by bounded searches before its sweep is made: the pass asks
 * mostly about nearby nodes, where a search costs a few steps and a sweep a walk of the order, so
 * a chunk asked about rarely never needs one (on llama3-405b × 1024 most chunks are asked only a
 * few times); a chunk asked about often gets its sweep, so no chunk costs more than this many
 * searches plus one sweep.
 */
const SEARCHES_PER_CHUNK = 32;

export class TargetReach {
  private readonly bit: Int32Array;
  private readonly bounded: boolean;
  private pos: Int32Array | undefined;
  private seen: Int32Array | undefined;
  private stamp = 0;
  private readonly chunks: number;
  private readonly up: (Int32Array | undefined)[]; // up[k][x]: targets of chunk k that x is an ancestor of
  private readonly down: (Int32Array | undefined)[]; // down[k][y]: targets of chunk k that are ancestors of y
  /** Per chunk: the first and last position in the order of its targets (a sweep covers only what they reach). */
  private readonly first: Int32Array;
  private readonly last: Int32Array;
  private readonly asked: Int32Array; // per chunk: questions up (2k) and down (2k + 1) so far

  constructor(
    private readonly dag: Dag,
    targets: readonly number[],
    maxWords = MAX_WORDS,
  ) {
    this.bit = new Int32Array(dag.n).fill(-1);
    let b = 0;
    for (const t of targets) if (this.bit[t] < 0) this.bit[t] = b++;
    this.chunks = Math.ceil(b / 32);
    this.bounded = this.chunks * dag.n > maxWords;
    this.up = new Array(this.chunks);
    this.down = new Array(this.chunks);
    this.first = new Int32Array(this.chunks).fill(dag.n);
    this.last = new Int32Array(this.chunks).fill(-1);
    this.asked = new Int32Array(2 * this.chunks);
    for (let p = 0; p < dag.order.length; p++) {
      const bt = this.bit[dag.order[p]];
      if (bt < 0) continue;
      const k = bt >>> 5;
      if (this.first[k] > p) this.first[k] = p;
      this.last[k] = p;
    }
  }

  /** Is x a (strict) ancestor of the target t? */
  isAncestorOfTarget(x: number, t: number): boolean {
    const b = this.bit[t];
    if (b < 0) throw new Error(`reach: node ${t} is not a target`);
    const k = b >>> 5;
    const searching = this.bounded || ++this.asked[2 * k] <= SEARCHES_PER_CHUNK;
    const row = this.up[k] ?? (searching ? null : this.sweepUp(k));
    if (row === null) return this.search(x, t);
    this.up[k] = row;
    return (row[x] & (1 << (b & 31))) !== 0;
  }

  /** Is the target t a (strict) ancestor of y? */
  targetIsAncestorOf(t: number, y: number): boolean {
    const b = this.bit[t];
    if (b < 0) throw new Error(`reach: node ${t} is not a target`);
    const k = b >>> 5;
    const searching = this.bounded || ++this.asked[2 * k + 1] <= SEARCHES_PER_CHUNK;
    const row = this.down[k] ?? (searching ? null : this.sweepDown(k));
    if (row === null) return this.search(t, y);
    this.down[k] = row;
    return (row[y] & (1 << (b & 31))) !== 0;
  }

  /** Is a a strict ancestor of b? A backward search from b that never goes above a's position. */
  private search(a: number, b: number): boolean {
    const { n, order, parOff, parIdx } = this.dag;
    if (this.pos === undefined) {
      this.pos = new Int32Array(n);
      for (let p = 0; p < order.length; p++) this.pos[order[p]] = p;
      this.seen = new Int32Array(n);
    }
    const pos = this.pos;
    const seen = this.seen!;
    const floor = pos[a];
    if (pos[b] <= floor) return false;
    const stamp = ++this.stamp;
    const stack = [b];
    while (stack.length > 0) {
      const y = stack.pop()!;
      for (let e = parOff[y]; e < parOff[y + 1]; e++) {
        const x = parIdx[e];
        if (x === a) return true;
        if (pos[x] <= floor || seen[x] === stamp) continue;
        seen[x] = stamp;
        stack.push(x);
      }
    }
    return false;
  }

  /** Chunk k's descendants: one pass down the order from its first target (nothing above it is reached). */
  private sweepDown(k: number): Int32Array {
    const { n, order, parOff, parIdx } = this.dag;
    const bit = this.bit;
    const row = new Int32Array(n);
    for (let p = this.first[k]; p < order.length; p++) {
      const y = order[p];
      let v = 0;
      for (let e = parOff[y]; e < parOff[y + 1]; e++) {
        const x = parIdx[e];
        v |= row[x];
        const b = bit[x];
        if (b >= 0 && b >>> 5 === k) v |= 1 << (b & 31);
      }
      row[y] = v;
    }
    return row;
  }

  /** Chunk k's ancestors: one pass up the order from its last target (nothing below it is an ancestor). */
  private sweepUp(k: number): Int32Array {
    const { n, order, parOff, parIdx } = this.dag;
    const bit = this.bit;
    const row = new Int32Array(n);
    // reverse order: every user of y is final before y's parents read it
    for (let p = this.last[k]; p >= 0; p--) {
      const y = order[p];
      const b = bit[y];
      const v = row[y] | (b >= 0 && b >>> 5 === k ? 1 << (b & 31) : 0);
      if (v === 0) continue;
      for (let e = parOff[y]; e < parOff[y + 1]; e++) row[parIdx[e]] |= v;
    }
    return row;
  }
}
