// The graph torch's manual pass rewrites, as items: every original node keeps its number, and
// each bucket adds a merged start and a merged wait (ids from n up). Edges are kept both ways and
// rewired as torch's merge does: a merged start reads its members' inputs (a folded cast's input
// in its place), a merged wait reads its start, and every reader of a member's wait reads the
// merged wait. The order is a NodeList, edited as torch edits the FX node list.

import type { ManualGraph } from './manual_graph';
import { NodeList } from '../node_list';

export class ItemGraph {
  readonly preds: number[][];
  readonly succs: number[][];
  readonly list: NodeList;
  /** The item a removed node now is: a member's start → its bucket start, its wait → the bucket wait. */
  readonly replacedBy: Int32Array;

  constructor(readonly g: ManualGraph) {
    this.preds = g.inputs.map((ins) => [...ins]);
    this.succs = g.inputs.map(() => []);
    g.inputs.forEach((ins, i) => ins.forEach((p) => this.succs[p].push(i)));
    this.list = new NodeList(Array.from({ length: g.n }, (_, i) => i));
    this.replacedBy = new Int32Array(g.n).fill(-1);
  }

  get size(): number {
    return this.preds.length;
  }

  /** A new item with these inputs (not yet in the order). */
  addItem(inputs: readonly number[]): number {
    const id = this.preds.length;
    this.preds.push([...new Set(inputs)]);
    this.succs.push([]);
    for (const p of this.preds[id]) this.succs[p].push(id);
    return id;
  }

  /** Every reader of `from` reads `to` instead (input order kept, duplicates dropped). */
  redirectReaders(from: number, to: number): void {
    for (const u of this.succs[from]) {
      const ps = this.preds[u];
      const k = ps.indexOf(from);
      if (ps.includes(to)) ps.splice(k, 1);
      else {
        ps[k] = to;
        this.succs[to].push(u);
      }
    }
    this.succs[from] = [];
  }

  /** Drops `id` from the order and from its inputs' readers. */
  erase(id: number): void {
    for (const p of this.preds[id]) {
      const s = this.succs[p];
      const k = s.indexOf(id);
      if (k >= 0) s.splice(k, 1);
    }
    this.preds[id] = [];
    this.list.remove(id);
  }

  isPlaceholder(id: number): boolean {
    return id < this.g.n && this.g.placeholder[id] === 1;
  }

  isOutput(id: number): boolean {
    return id < this.g.n && this.g.output[id] === 1;
  }
}
