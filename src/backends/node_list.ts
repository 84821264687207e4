// An FX graph's node list as FX keeps it (torch/fx/graph.py): a doubly linked list over dense item
// numbers with FX's moves (`prepend`: move before, `append`: move after), removal, and positions read
// off in one walk (torch re-reads `enumerate(graph.nodes)` the same way). The manual pass edits its
// program order in it (manual/item_graph.ts); pre-bucketing's FxList keeps its nodes in it.

export class NodeList {
  private readonly prev: number[] = [];
  private readonly next: number[] = [];
  private readonly inList: boolean[] = [];
  private head = -1;
  private tail = -1;

  constructor(order: readonly number[]) {
    for (const id of order) this.pushBack(id);
  }

  has(id: number): boolean {
    return this.inList[id] === true;
  }

  /** The item after `id`, or -1 at the end. */
  after(id: number): number {
    return this.next[id];
  }

  /** The item before `id`, or -1 at the start. */
  before(id: number): number {
    return this.prev[id];
  }

  pushBack(id: number): void {
    this.prev[id] = this.tail;
    this.next[id] = -1;
    if (this.tail >= 0) this.next[this.tail] = id;
    else this.head = id;
    this.tail = id;
    this.inList[id] = true;
  }

  remove(id: number): void {
    if (!this.has(id)) return;
    const p = this.prev[id];
    const n = this.next[id];
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
    this.inList[id] = false;
  }

  /** Moves (or inserts) `id` right before `anchor`; anchor -1 is the end. */
  moveBefore(anchor: number, id: number): void {
    if (anchor === id) return;
    this.remove(id);
    if (anchor < 0) return this.pushBack(id);
    const p = this.prev[anchor];
    this.prev[id] = p;
    this.next[id] = anchor;
    this.prev[anchor] = id;
    if (p >= 0) this.next[p] = id;
    else this.head = id;
    this.inList[id] = true;
  }

  /** Moves (or inserts) `id` right after `anchor`. */
  moveAfter(anchor: number, id: number): void {
    if (anchor === id) return;
    this.moveBefore(this.next[anchor], id);
  }

  toArray(): number[] {
    const out: number[] = [];
    for (let id = this.head; id >= 0; id = this.next[id]) out.push(id);
    return out;
  }

  /** Position of every listed item (index into `toArray()`); -1 for items not in the list. */
  positions(size: number): Int32Array {
    const pos = new Int32Array(size).fill(-1);
    let k = 0;
    for (let id = this.head; id >= 0; id = this.next[id]) pos[id] = k++;
    return pos;
  }
}
