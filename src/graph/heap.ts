// The project's one min-heap (ready queues, topological sorts). Laid out exactly as Python's
// heapq lays out its list (heappush, heappop, heapify), so code that scans the heap's list in
// place (torch's off-path batching does) sees entries in the same order. Keys are number tuples
// compared lexicographically.
// Upstream: cpython Lib/heapq.py (_siftdown, _siftup).

export interface HeapEntry {
  readonly key: readonly number[];
  readonly node: number;
}

function less(a: HeapEntry, b: HeapEntry): boolean {
  const x = a.key;
  const y = b.key;
  for (let k = 0; k < x.length && k < y.length; k++) if (x[k] !== y[k]) return x[k] < y[k];
  return x.length < y.length;
}

export class PyHeap {
  readonly items: HeapEntry[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): HeapEntry | undefined {
    return this.items[0];
  }

  push(key: readonly number[], node: number): void {
    this.items.push({ key, node });
    this.siftDown(0, this.items.length - 1);
  }

  pop(): HeapEntry {
    const last = this.items.pop()!;
    if (this.items.length === 0) return last;
    const top = this.items[0];
    this.items[0] = last;
    this.siftUp(0);
    return top;
  }

  /** Removes the entries at `positions` (list order, any order given) and restores the heap. */
  removeAt(positions: readonly number[]): void {
    for (const p of [...positions].sort((a, b) => b - a)) this.items.splice(p, 1);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.siftUp(i);
  }

  /** heapq._siftdown: move the entry at `pos` up towards `start` while it is smaller than its parent. */
  private siftDown(start: number, pos: number): void {
    const h = this.items;
    const item = h[pos];
    while (pos > start) {
      const parent = (pos - 1) >> 1;
      if (!less(item, h[parent])) break;
      h[pos] = h[parent];
      pos = parent;
    }
    h[pos] = item;
  }

  /** heapq._siftup: move the smaller child up to a leaf, then sift the entry down into place. */
  private siftUp(pos: number): void {
    const h = this.items;
    const end = h.length;
    const start = pos;
    const item = h[pos];
    let child = 2 * pos + 1;
    while (child < end) {
      const right = child + 1;
      if (right < end && !less(h[child], h[right])) child = right;
      h[pos] = h[child];
      pos = child;
      child = 2 * pos + 1;
    }
    h[pos] = item;
    this.siftDown(start, pos);
  }
}
