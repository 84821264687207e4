// Static reachability to and from a set of target nodes (collective starts and waits): the
// questions torch answers with its BitsetAncestors, for the targets the pass asks about. Targets
// get one bit each, 32 per chunk; one sweep per chunk over a topological order fills a word per
// node. O(targets/32 · edges) time and O(targets/32 · nodes) words, instead of nodes².
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
  n: number, parOff: Int32Array, parIdx: Int32Array, extra: ReadonlyMap<number, readonly number[]>,
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

export class TargetReach {
  private readonly bit: Int32Array;
  private readonly chunks: number;
  private up: Int32Array[] | undefined; // up[k][x]: targets of chunk k that x is an ancestor of
  private down: Int32Array[] | undefined; // down[k][y]: targets of chunk k that are ancestors of y

  constructor(
    private readonly dag: Dag,
    targets: readonly number[],
  ) {
    this.bit = new Int32Array(dag.n).fill(-1);
    let b = 0;
    for (const t of targets) if (this.bit[t] < 0) this.bit[t] = b++;
    this.chunks = Math.ceil(b / 32);
  }

  /** Is x a (strict) ancestor of the target t? */
  isAncestorOfTarget(x: number, t: number): boolean {
    const b = this.bit[t];
    if (b < 0) throw new Error(`reach: node ${t} is not a target`);
    return ((this.up ??= this.sweepUp())[b >>> 5][x] & (1 << (b & 31))) !== 0;
  }

  /** Is the target t a (strict) ancestor of y? */
  targetIsAncestorOf(t: number, y: number): boolean {
    const b = this.bit[t];
    if (b < 0) throw new Error(`reach: node ${t} is not a target`);
    return ((this.down ??= this.sweepDown())[b >>> 5][y] & (1 << (b & 31))) !== 0;
  }

  private sweepDown(): Int32Array[] {
    const { n, order, parOff, parIdx } = this.dag;
    const bit = this.bit;
    const rows = Array.from({ length: this.chunks }, () => new Int32Array(n));
    for (let k = 0; k < this.chunks; k++) {
      const row = rows[k];
      for (let p = 0; p < order.length; p++) {
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
    }
    return rows;
  }

  private sweepUp(): Int32Array[] {
    const { n, order, parOff, parIdx } = this.dag;
    const bit = this.bit;
    const rows = Array.from({ length: this.chunks }, () => new Int32Array(n));
    for (let k = 0; k < this.chunks; k++) {
      const row = rows[k];
      // reverse order: every user of y is final before y's parents read it
      for (let p = order.length - 1; p >= 0; p--) {
        const y = order[p];
        const b = bit[y];
        const v = row[y] | (b >= 0 && b >>> 5 === k ? 1 << (b & 31) : 0);
        if (v === 0) continue;
        for (let e = parOff[y]; e < parOff[y + 1]; e++) row[parIdx[e]] |= v;
      }
    }
    return rows;
  }
}
