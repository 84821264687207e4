// An FX graph's node list as FX keeps it: doubly linked, so a merge inserts and erases in time
// proportional to what it touches, and a region re-sort walks only the region.
// Upstream: torch/fx/graph.py (Graph's node list), bucketing.py (_sort_bucket_region).

import type { GraphNode } from '../../graph';
import { NodeList } from '../node_list';

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

/** The nodes in a NodeList (backends/node_list.ts) by their numbers. */
export class FxList {
  private readonly list: NodeList;

  constructor(
    nodes: readonly GraphNode[],
    private readonly ids: NodeIds = new NodeIds(nodes),
  ) {
    this.list = new NodeList(nodes.map((n) => ids.of(n)));
  }

  /** The node's number when it is in the list. */
  private slot(n: GraphNode): number | undefined {
    const s = this.ids.get(n);
    return s !== undefined && this.list.has(s) ? s : undefined;
  }

  private nodeAt(s: number): GraphNode | null {
    return s < 0 ? null : this.ids.node(s);
  }

  /** Inserts `nodes`, in order, right after `anchor`. */
  insertAfter(anchor: GraphNode, nodes: readonly GraphNode[]): void {
    let at = this.ids.of(anchor);
    for (const n of nodes) {
      const s = this.ids.of(n);
      this.list.moveAfter(at, s);
      at = s;
    }
  }

  remove(n: GraphNode): void {
    const s = this.slot(n);
    if (s !== undefined) this.list.remove(s);
  }

  before(n: GraphNode): GraphNode | null {
    const s = this.slot(n);
    return s === undefined ? null : this.nodeAt(this.list.before(s));
  }

  after(n: GraphNode): GraphNode | null {
    const s = this.slot(n);
    return s === undefined ? null : this.nodeAt(this.list.after(s));
  }

  /** The nodes from `first` to `last`, inclusive. */
  span(first: GraphNode, last: GraphNode): GraphNode[] {
    const out: GraphNode[] = [];
    const end = this.slot(last);
    for (let s = this.slot(first) ?? -1; s >= 0; s = this.list.after(s)) {
      out.push(this.ids.node(s));
      if (s === end) break;
    }
    return out;
  }

  /** Puts `order` (a permutation of a listed span ending at `last`) in that span's place. */
  replaceSpan(last: GraphNode, order: readonly GraphNode[]): void {
    const next = this.list.after(this.ids.of(last));
    for (const n of order) this.list.moveBefore(next, this.ids.of(n));
  }

  toArray(): GraphNode[] {
    return this.list.toArray().map((s) => this.ids.node(s));
  }
}
