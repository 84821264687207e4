// An FX graph's node list as FX keeps it: doubly linked, so a merge inserts and erases in time
// proportional to what it touches, and a region re-sort walks only the region.
// Upstream: torch/fx/graph.py (Graph's node list), bucketing.py (_sort_bucket_region).

import type { GraphNode } from '../../graph';

export class FxList {
  private readonly prev = new Map<GraphNode, GraphNode | null>();
  private readonly next = new Map<GraphNode, GraphNode | null>();
  private head: GraphNode | null = null;
  private tail: GraphNode | null = null;

  constructor(nodes: readonly GraphNode[]) {
    for (const n of nodes) this.append(n);
  }

  private append(n: GraphNode): void {
    this.prev.set(n, this.tail);
    this.next.set(n, null);
    if (this.tail) this.next.set(this.tail, n);
    else this.head = n;
    this.tail = n;
  }

  /** Inserts `nodes`, in order, right after `anchor`. */
  insertAfter(anchor: GraphNode, nodes: readonly GraphNode[]): void {
    let at = anchor;
    for (const n of nodes) {
      const after = this.next.get(at) ?? null;
      this.prev.set(n, at);
      this.next.set(n, after);
      this.next.set(at, n);
      if (after) this.prev.set(after, n);
      else this.tail = n;
      at = n;
    }
  }

  remove(n: GraphNode): void {
    const p = this.prev.get(n) ?? null;
    const q = this.next.get(n) ?? null;
    if (p) this.next.set(p, q);
    else this.head = q;
    if (q) this.prev.set(q, p);
    else this.tail = p;
    this.prev.delete(n);
    this.next.delete(n);
  }

  before(n: GraphNode): GraphNode | null {
    return this.prev.get(n) ?? null;
  }

  after(n: GraphNode): GraphNode | null {
    return this.next.get(n) ?? null;
  }

  /** The nodes from `first` to `last`, inclusive. */
  span(first: GraphNode, last: GraphNode): GraphNode[] {
    const out: GraphNode[] = [];
    for (let n: GraphNode | null = first; n !== null; n = this.after(n)) {
      out.push(n);
      if (n === last) break;
    }
    return out;
  }

  /** Puts `order` (a permutation of the span from `first` to `last`) in that span's place. */
  replaceSpan(first: GraphNode, last: GraphNode, order: readonly GraphNode[]): void {
    const p = this.before(first);
    const q = this.after(last);
    let at = p;
    for (const n of order) {
      this.prev.set(n, at);
      if (at) this.next.set(at, n);
      else this.head = n;
      at = n;
    }
    if (at) this.next.set(at, q);
    if (q) this.prev.set(q, at);
    else this.tail = at;
  }

  toArray(): GraphNode[] {
    const out: GraphNode[] = [];
    for (let n = this.head; n !== null; n = this.after(n)) out.push(n);
    return out;
  }
}
