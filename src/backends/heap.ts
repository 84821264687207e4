// Binary min-heap of (k0, k1, k2, value) entries compared lexicographically; the scheduler's
// ready queues (torch uses heapq with tuple scores). Deterministic: ties fall to the next key.

interface Entry {
  readonly k0: number;
  readonly k1: number;
  readonly k2: number;
  readonly value: number;
}

const less = (a: Entry, b: Entry) =>
  a.k0 !== b.k0 ? a.k0 < b.k0 : a.k1 !== b.k1 ? a.k1 < b.k1 : a.k2 !== b.k2 ? a.k2 < b.k2 : a.value < b.value;

export class TupleHeap {
  private readonly items: Entry[] = [];

  get size(): number {
    return this.items.length;
  }

  push(k0: number, k1: number, k2: number, value: number): void {
    const a = this.items;
    a.push({ k0, k1, k2, value });
    let c = a.length - 1;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!less(a[c], a[p])) break;
      [a[p], a[c]] = [a[c], a[p]];
      c = p;
    }
  }

  /** Value of the smallest entry (undefined when empty). */
  peek(): number | undefined {
    return this.items[0]?.value;
  }

  pop(): number {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let p = 0;
      for (;;) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < a.length && less(a[l], a[m])) m = l;
        if (r < a.length && less(a[r], a[m])) m = r;
        if (m === p) break;
        [a[p], a[m]] = [a[m], a[p]];
        p = m;
      }
    }
    return top.value;
  }
}
