// An FX graph's node list as FX keeps it: doubly linked, so a merge inserts and erases in time
// proportional to what it touches, and a region re-sort walks only the region.
// Upstream: torch/fx/graph.py (Graph's node list), bucketing.py (_sort_bucket_region).

import type { GraphNode } from '../../graph';

/**
 * Dense numbers for the nodes of one FX graph, old and new: the tables a pass keeps per node are
 * arrays by number. A node is found by its `id` (its graph position, or one `unusedId` gave a new
 * node) in an array; a map, slow to fill, holds only the nodes whose id another node holds.
 */
export class NodeIds {
  private readonly nodes: GraphNode[] = [];
  private readonly byId: number[] = []; // node id → the number of the node holding it, -1: none
  private readonly others = new Map<GraphNode, number>();
  private readonly maxId: number; // the array's bound: a graph's ids are about its positions

  constructor(nodes: readonly GraphNode[]) {
    this.maxId = 4 * nodes.length + 65536;
    for (const n of nodes) this.of(n);
  }

  /** The node's number; a node not seen before gets the next one. */
  of(n: GraphNode): number {
    const s = this.get(n);
    return s !== undefined ? s : this.add(n);
  }

  get(n: GraphNode): number | undefined {
    const s = this.byId[n.id];
    if (s !== undefined && s >= 0 && this.nodes[s] === n) return s;
    return this.others.size === 0 ? undefined : this.others.get(n);
  }

  node(id: number): GraphNode {
    return this.nodes[id];
  }

  /** One more than the highest number given. */
  get size(): number {
    return this.nodes.length;
  }

  /** An id for a node a merge makes: past those numbered so far, and past earlier calls' ids. */
  unusedId(): number {
    this.byId.push(-1);
    return this.byId.length - 1;
  }

  private add(n: GraphNode): number {
    const s = this.nodes.push(n) - 1;
    const id = n.id;
    if (!Number.isInteger(id) || id < 0 || id > this.maxId) {
      this.others.set(n, s);
      return s;
    }
    while (this.byId.length <= id) this.byId.push(-1);
    if (this.byId[id] >= 0) this.others.set(n, s);
    else this.byId[id] = s;
    return s;
  }
}

/** Links by node number (-1: none). */
export class FxList {
  private readonly inList: boolean[] = [];
  private readonly prev: number[] = [];
  private readonly next: number[] = [];
  private head = -1;
  private tail = -1;

  constructor(
    nodes: readonly GraphNode[],
    private readonly ids: NodeIds = new NodeIds(nodes),
  ) {
    for (const n of nodes) {
      const s = this.slotOf(n);
      this.prev[s] = this.tail;
      this.next[s] = -1;
      if (this.tail >= 0) this.next[this.tail] = s;
      else this.head = s;
      this.tail = s;
    }
  }

  /** The node's number, now in the list. */
  private slotOf(n: GraphNode): number {
    const s = this.ids.of(n);
    while (this.prev.length <= s) {
      this.prev.push(-1);
      this.next.push(-1);
      this.inList.push(false);
    }
    this.inList[s] = true;
    return s;
  }

  /** The node's number when it is in the list. */
  private slot(n: GraphNode): number | undefined {
    const s = this.ids.get(n);
    return s !== undefined && this.inList[s] === true ? s : undefined;
  }

  private nodeAt(s: number): GraphNode | null {
    return s < 0 ? null : this.ids.node(s);
  }

  /** Inserts `nodes`, in order, right after `anchor`. */
  insertAfter(anchor: GraphNode, nodes: readonly GraphNode[]): void {
    let at = this.slotOf(anchor);
    for (const n of nodes) {
      const s = this.slotOf(n);
      const after = this.next[at];
      this.prev[s] = at;
      this.next[s] = after;
      this.next[at] = s;
      if (after >= 0) this.prev[after] = s;
      else this.tail = s;
      at = s;
    }
  }

  remove(n: GraphNode): void {
    const s = this.slot(n);
    if (s === undefined) return;
    const p = this.prev[s];
    const q = this.next[s];
    if (p >= 0) this.next[p] = q;
    else this.head = q;
    if (q >= 0) this.prev[q] = p;
    else this.tail = p;
    this.inList[s] = false;
  }

  before(n: GraphNode): GraphNode | null {
    const s = this.slot(n);
    return s === undefined ? null : this.nodeAt(this.prev[s]);
  }

  after(n: GraphNode): GraphNode | null {
    const s = this.slot(n);
    return s === undefined ? null : this.nodeAt(this.next[s]);
  }

  /** The nodes from `first` to `last`, inclusive. */
  span(first: GraphNode, last: GraphNode): GraphNode[] {
    const out: GraphNode[] = [];
    const end = this.slot(last);
    for (let s = this.slot(first) ?? -1; s >= 0; s = this.next[s]) {
      out.push(this.ids.node(s));
      if (s === end) break;
    }
    return out;
  }

  /** Puts `order` (a permutation of the span from `first` to `last`) in that span's place. */
  replaceSpan(first: GraphNode, last: GraphNode, order: readonly GraphNode[]): void {
    const p = this.prev[this.slotOf(first)];
    const q = this.next[this.slotOf(last)];
    let at = p;
    for (const n of order) {
      const s = this.slotOf(n);
      this.prev[s] = at;
      if (at >= 0) this.next[at] = s;
      else this.head = s;
      at = s;
    }
    if (at >= 0) this.next[at] = q;
    if (q >= 0) this.prev[q] = at;
    else this.tail = at;
  }

  toArray(): GraphNode[] {
    const out: GraphNode[] = [];
    for (let s = this.head; s >= 0; s = this.next[s]) out.push(this.ids.node(s));
    return out;
  }
}
