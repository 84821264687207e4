// Binary min-heap of (k0, k1, k2, value) entries compared lexicographically; the scheduler's
// ready queues (torch uses heapq with tuple scores). Deterministic: ties fall to the next key,
// then to the value. Entries live in one growable Float64Array (4 slots each): no garbage.

export class TupleHeap {
  private a = new Float64Array(4 * 64);
  private n = 0;

  get size(): number {
    return this.n;
  }

  private less(i: number, j: number): boolean {
    const a = this.a;
    const x = 4 * i;
    const y = 4 * j;
    for (let k = 0; k < 4; k++) if (a[x + k] !== a[y + k]) return a[x + k] < a[y + k];
    return false;
  }

  private swap(i: number, j: number): void {
    const a = this.a;
    const x = 4 * i;
    const y = 4 * j;
    for (let k = 0; k < 4; k++) {
      const t = a[x + k];
      a[x + k] = a[y + k];
      a[y + k] = t;
    }
  }

  push(k0: number, k1: number, k2: number, value: number): void {
    if (4 * (this.n + 1) > this.a.length) {
      const grown = new Float64Array(this.a.length * 2);
      grown.set(this.a);
      this.a = grown;
    }
    const x = 4 * this.n;
    this.a[x] = k0;
    this.a[x + 1] = k1;
    this.a[x + 2] = k2;
    this.a[x + 3] = value;
    let c = this.n++;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!this.less(c, p)) break;
      this.swap(c, p);
      c = p;
    }
  }

  /** Value of the smallest entry (undefined when empty). */
  peek(): number | undefined {
    return this.n > 0 ? this.a[3] : undefined;
  }

  pop(): number {
    const top = this.a[3];
    this.n--;
    if (this.n > 0) {
      this.a.copyWithin(0, 4 * this.n, 4 * this.n + 4);
      let p = 0;
      for (;;) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < this.n && this.less(l, m)) m = l;
        if (r < this.n && this.less(r, m)) m = r;
        if (m === p) break;
        this.swap(p, m);
        p = m;
      }
    }
    return top;
  }
}
