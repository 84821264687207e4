// Augmented dependency graph for the overlap-preserving bucketer (torch's AugmentedGraphHelper):
// the graph's edges plus removable extra edges (process-group timelines), with nodes merged
// into sets as collectives are bucketed. Unlike torch we keep a topological order of the sets
// at all times (dynamic topological order, Pearce–Kelly style): has_path searches only the
// window between the two sets' positions, and a merge re-sorts only that window. The kept
// order is also the final execution order.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/augmented_graph_helper.py

export class AugmentedGraph {
  private readonly parent: Int32Array;
  /** Members of a set as a circular list (nextMember), so a union is O(1). */
  private readonly nextMember: Int32Array;
  private readonly extraPred: (Map<number, number> | undefined)[];
  private readonly extraSucc: (Map<number, number> | undefined)[];
  /** Slots of the topological order: a set representative, or -1 for a slot freed by a merge. */
  readonly slots: Int32Array;
  private readonly slotOf: Int32Array;
  private readonly seen: Int32Array;
  private stamp = 0;

  /** Static edges in CSR form; `order` must be a topological order of them (and of later extra deps). */
  constructor(
    private readonly predOff: Int32Array,
    private readonly predIdx: Int32Array,
    private readonly succOff: Int32Array,
    private readonly succIdx: Int32Array,
    order: ArrayLike<number>,
  ) {
    const n = predOff.length - 1;
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
    this.nextMember = Int32Array.from({ length: n }, (_, i) => i);
    this.extraPred = new Array(n);
    this.extraSucc = new Array(n);
    this.slots = Int32Array.from(order);
    this.slotOf = new Int32Array(n);
    for (let p = 0; p < order.length; p++) this.slotOf[order[p]] = p;
    this.seen = new Int32Array(n);
  }

  find(x: number): number {
    let r = x;
    while (this.parent[r] !== r) r = this.parent[r];
    while (this.parent[x] !== r) {
      const nx = this.parent[x];
      this.parent[x] = r;
      x = nx;
    }
    return r;
  }

  setMembers(x: number): number[] {
    const out: number[] = [];
    const r = this.find(x);
    let m = r;
    do {
      out.push(m);
      m = this.nextMember[m];
    } while (m !== r);
    return out;
  }

  /** Extra edge dep → n (n must run after dep); counted, so equal edges from two timelines coexist. */
  addExtraDep(n: number, dep: number): void {
    const p = (this.extraPred[n] ??= new Map());
    p.set(dep, (p.get(dep) ?? 0) + 1);
    const s = (this.extraSucc[dep] ??= new Map());
    s.set(n, (s.get(n) ?? 0) + 1);
  }

  removeExtraDep(n: number, dep: number): void {
    const dec = (m: Map<number, number> | undefined, k: number) => {
      if (m === undefined) return;
      const c = m.get(k);
      if (c === undefined) return;
      if (c <= 1) m.delete(k);
      else m.set(k, c - 1);
    };
    dec(this.extraPred[n], dep);
    dec(this.extraSucc[dep], n);
  }

  /** Pushes onto `stack` the unseen sets feeding `set` whose slot is above `lo`; true when `target` feeds it. */
  private expandPreds(set: number, target: number, lo: number, stamp: number, stack: number[]): boolean {
    let m = set;
    do {
      for (let k = this.predOff[m]; k < this.predOff[m + 1]; k++) if (this.visit(this.predIdx[k], target, lo, stamp, stack, true)) return true;
      const e = this.extraPred[m];
      if (e !== undefined) for (const p of e.keys()) if (this.visit(p, target, lo, stamp, stack, true)) return true;
      m = this.nextMember[m];
    } while (m !== set);
    return false;
  }

  /** Pushes onto `stack` the unseen sets fed by `set` whose slot is below `hi`. */
  private expandSuccs(set: number, hi: number, stamp: number, stack: number[]): void {
    let m = set;
    do {
      for (let k = this.succOff[m]; k < this.succOff[m + 1]; k++) this.visit(this.succIdx[k], -1, hi, stamp, stack, false);
      const e = this.extraSucc[m];
      if (e !== undefined) for (const s of e.keys()) this.visit(s, -1, hi, stamp, stack, false);
      m = this.nextMember[m];
    } while (m !== set);
  }

  private visit(x: number, target: number, bound: number, stamp: number, stack: number[], above: boolean): boolean {
    const r = this.find(x);
    if (r === target) return true;
    if (this.seen[r] !== stamp && (above ? this.slotOf[r] > bound : this.slotOf[r] < bound)) {
      this.seen[r] = stamp;
      stack.push(r);
    }
    return false;
  }

  /** Is there a path from `from` to `to` (from must run before to)? */
  hasPath(from: number, to: number): boolean {
    const a = this.find(from);
    const b = this.find(to);
    if (a === b) return true;
    const lo = this.slotOf[a];
    if (lo > this.slotOf[b]) return false; // the kept order is topological
    const stamp = ++this.stamp;
    const stack = [b];
    this.seen[b] = stamp;
    while (stack.length > 0) if (this.expandPreds(stack.pop()!, a, lo, stamp, stack)) return true;
    return false;
  }

  /**
   * Merges `other` into `keep`'s set (caller checked there is no path either way); the merged set
   * takes keep's place in the order, and the window between them is re-sorted.
   */
  merge(keep: number, other: number): void {
    const k = this.find(keep);
    const o = this.find(other);
    if (k === o) return;
    const sk = this.slotOf[k];
    const so = this.slotOf[o];
    const stamp = ++this.stamp;
    const moved: number[] = [];
    if (sk < so) {
      // keep is earlier: o's ancestors inside the window move in front of keep
      const stack = [o];
      this.seen[o] = stamp;
      while (stack.length > 0) this.expandPreds(stack.pop()!, -1, sk, stamp, stack);
      const before: number[] = [];
      const after: number[] = [];
      for (let s = sk + 1; s < so; s++) {
        const r = this.slots[s];
        if (r < 0) continue;
        (this.seen[r] === stamp ? before : after).push(r);
      }
      moved.push(...before, k, ...after);
      while (moved.length < so - sk + 1) moved.push(-1);
      this.slots.set(moved, sk);
      for (let i = 0; i < moved.length; i++) if (moved[i] >= 0) this.slotOf[moved[i]] = sk + i;
    } else {
      // keep is later: o's descendants inside the window move behind keep
      const stack = [o];
      this.seen[o] = stamp;
      while (stack.length > 0) this.expandSuccs(stack.pop()!, sk, stamp, stack);
      const before: number[] = [];
      const after: number[] = [];
      for (let s = so + 1; s < sk; s++) {
        const r = this.slots[s];
        if (r < 0) continue;
        (this.seen[r] === stamp ? after : before).push(r);
      }
      const body = [...before, k, ...after];
      while (moved.length + body.length < sk - so + 1) moved.push(-1);
      moved.push(...body);
      this.slots.set(moved, so);
      for (let i = 0; i < moved.length; i++) if (moved[i] >= 0) this.slotOf[moved[i]] = so + i;
    }
    this.parent[o] = k;
    const t = this.nextMember[k]; // splice the two circular member lists
    this.nextMember[k] = this.nextMember[o];
    this.nextMember[o] = t;
  }
}
