// torch's inductor pass simple_overlap (torch/_inductor/comms.py, PRs #184225, #184235, #184240), ported:
// every async collective moves earlier and every wait later by adjacent swaps; a collective never
// passes another collective or a node making its input, a wait never passes another wait or a node
// reading its output, and no swap may lift the memory above the order's starting peak. No runtime
// estimate is read. torch runs it only in inductor's Scheduler (see the knob's help in
// backends/autobucketing/options.ts); this is the pass alone, on a list of nodes and buffers.

/** A scheduler node as the pass sees it. */
export interface OverlapNode {
  readonly name: string;
  readonly kind: 'collective' | 'wait' | 'other';
  readonly outputs: readonly string[]; // buffers it makes
  readonly deps: readonly string[]; // buffers (and order-only names) it waits for
}

/** A buffer, for the memory check: allocated by its producer (a graph input: at the first node), freed
 * after its last user. */
export interface OverlapBuffer {
  readonly name: string;
  readonly producer: string | null; // null: a graph input torch may free
  readonly sizeAlloc: number; // bytes
  readonly sizeFree: number; // bytes
  readonly users: readonly string[];
  readonly graphOutput: boolean; // never freed
}

export interface SimpleOverlapResult {
  readonly order: readonly string[];
  readonly peakBytes: number; // the starting order's peak, the bound every swap keeps
  readonly movedCollectives: number;
  readonly movedWaits: number;
}

interface Tables {
  readonly kind: OverlapNode['kind'][];
  readonly outputs: Set<string>[];
  readonly deps: Set<string>[];
  readonly made: number[][]; // per node: the buffers it allocates (by buffer number)
  readonly touched: number[][]; // per node: the buffers it makes or reads (freed after their last toucher)
  readonly producer: Int32Array; // per buffer: node number, -1 for a graph input
  readonly users: number[][];
  readonly inputBytes: number; // graph inputs, allocated at whichever node runs first
}

function tables(nodes: readonly OverlapNode[], buffers: readonly OverlapBuffer[]): Tables {
  const at = new Map(nodes.map((n, i) => [n.name, i]));
  const nodeOf = (name: string, field: string): number => {
    const i = at.get(name);
    if (i === undefined) throw new Error(`simple_overlap: buffer ${field} names unknown node '${name}'`);
    return i;
  };
  const made = nodes.map((): number[] => []);
  const touched = nodes.map((): number[] => []);
  const producer = new Int32Array(buffers.length);
  let inputBytes = 0;
  buffers.forEach((b, k) => {
    producer[k] = b.producer === null ? -1 : nodeOf(b.producer, 'producer');
    if (producer[k] >= 0) {
      made[producer[k]].push(k);
      touched[producer[k]].push(k);
    } else inputBytes += b.sizeAlloc;
    for (const u of b.users) if (!touched[nodeOf(u, 'users')].includes(k)) touched[nodeOf(u, 'users')].push(k);
  });
  return {
    kind: nodes.map((n) => n.kind),
    outputs: nodes.map((n) => new Set(n.outputs)),
    deps: nodes.map((n) => new Set(n.deps)),
    made,
    touched,
    producer,
    users: buffers.map((b) => b.users.map((u) => nodeOf(u, 'users'))),
    inputBytes,
  };
}

/** The order as a mutable list with positions, and the memory after each node's frees (torch's post_free). */
class Order {
  readonly at: number[]; // position → node
  readonly pos: Int32Array; // node → position
  readonly postFree: number[];
  readonly peak: number;

  constructor(
    private readonly t: Tables,
    private readonly buffers: readonly OverlapBuffer[],
    n: number,
  ) {
    this.at = Array.from({ length: n }, (_, i) => i);
    this.pos = Int32Array.from(this.at);
    this.postFree = new Array<number>(n).fill(0);
    let cur = 0;
    let peak = 0;
    for (let p = 0; p < n; p++) {
      cur += this.allocAt(p);
      peak = Math.max(peak, cur);
      cur -= this.freeAt(p);
      this.postFree[p] = cur;
    }
    this.peak = peak;
  }

  private allocAt(p: number): number {
    let bytes = p === 0 ? this.t.inputBytes : 0;
    for (const k of this.t.made[this.at[p]]) bytes += this.buffers[k].sizeAlloc;
    return bytes;
  }

  /** Bytes freed after the node at position p: buffers it touches whose last toucher it is. */
  private freeAt(p: number): number {
    let bytes = 0;
    for (const k of this.t.touched[this.at[p]]) if (this.endOf(k) === p) bytes += this.buffers[k].sizeFree;
    return bytes;
  }

  /** Where buffer k is freed: after its last user (its producer when it has none); -1: never. */
  private endOf(k: number): number {
    if (this.buffers[k].graphOutput) return -1;
    let end = this.t.producer[k] >= 0 ? this.pos[this.t.producer[k]] : 0;
    if (this.t.users[k].length > 0) end = -1;
    for (const u of this.t.users[k]) end = Math.max(end, this.pos[u]);
    return end;
  }

  /** Swaps positions p and p+1 when neither node's peak then exceeds the starting peak. */
  trySwap(p: number): boolean {
    this.exchange(p);
    const before = p > 0 ? this.postFree[p - 1] : 0;
    const firstAlloc = before + this.allocAt(p);
    const firstFree = firstAlloc - this.freeAt(p);
    const secondAlloc = firstFree + this.allocAt(p + 1);
    if (Math.max(firstAlloc, secondAlloc) > this.peak) {
      this.exchange(p);
      return false;
    }
    this.postFree[p] = firstFree;
    this.postFree[p + 1] = secondAlloc - this.freeAt(p + 1);
    return true;
  }

  private exchange(p: number): void {
    const a = this.at[p];
    const b = this.at[p + 1];
    this.at[p] = b;
    this.at[p + 1] = a;
    this.pos[b] = p;
    this.pos[a] = p + 1;
  }
}

const meets = (a: Set<string>, b: Set<string>): boolean => [...a].some((x) => b.has(x));

/**
 * torch's simple_overlap on `nodes` in their order: phase 1 takes each collective (in order) as far
 * up as it may go, phase 2 each wait (last first) as far down.
 */
export function simpleOverlap(nodes: readonly OverlapNode[], buffers: readonly OverlapBuffer[]): SimpleOverlapResult {
  const t = tables(nodes, buffers);
  const order = new Order(t, buffers, nodes.length);
  let movedCollectives = 0;
  let movedWaits = 0;
  for (let c = 0; c < nodes.length; c++) {
    if (t.kind[c] !== 'collective') continue;
    let moved = false;
    for (let p = order.pos[c]; p > 0; p = order.pos[c]) {
      const pred = order.at[p - 1];
      if (meets(t.outputs[pred], t.deps[c]) || t.kind[pred] === 'collective' || !order.trySwap(p - 1)) break;
      moved = true;
    }
    if (moved) movedCollectives++;
  }
  for (let w = nodes.length - 1; w >= 0; w--) {
    if (t.kind[w] !== 'wait') continue;
    let moved = false;
    for (let p = order.pos[w]; p < nodes.length - 1; p = order.pos[w]) {
      const succ = order.at[p + 1];
      if (meets(t.deps[succ], t.outputs[w]) || t.kind[succ] === 'wait' || !order.trySwap(p)) break;
      moved = true;
    }
    if (moved) movedWaits++;
  }
  return { order: order.at.map((i) => nodes[i].name), peakBytes: order.peak, movedCollectives, movedWaits };
}
