// A set of small integers kept as a two-level bitset: set, clear and "first member ≥ i" in
// O(n / 1024) words at worst, so walking the members in order skips long empty runs at once.
// The overlap scheduler walks its prefetch candidates (unscheduled collectives near enough to
// be prefetched) in registration order this way instead of scanning every collective.

export class OrderedBits {
  private readonly words: Int32Array;
  private readonly summary: Int32Array; // bit w set when words[w] !== 0

  constructor(size: number) {
    this.words = new Int32Array(Math.ceil(size / 32) + 1);
    this.summary = new Int32Array(Math.ceil(this.words.length / 32) + 1);
  }

  has(i: number): boolean {
    return (this.words[i >>> 5] & (1 << (i & 31))) !== 0;
  }

  add(i: number): void {
    const w = i >>> 5;
    this.words[w] |= 1 << (i & 31);
    this.summary[w >>> 5] |= 1 << (w & 31);
  }

  delete(i: number): void {
    const w = i >>> 5;
    this.words[w] &= ~(1 << (i & 31));
    if (this.words[w] === 0) this.summary[w >>> 5] &= ~(1 << (w & 31));
  }

  /** The smallest member ≥ i, or -1. */
  next(i: number): number {
    let w = i >>> 5;
    if (w >= this.words.length) return -1;
    const first = this.words[w] & (~0 << (i & 31));
    if (first !== 0) return (w << 5) + ctz(first);
    // the next non-empty word after w, found through the summary
    w++;
    let s = w >>> 5;
    if (s >= this.summary.length) return -1;
    let bits = this.summary[s] & (~0 << (w & 31));
    while (bits === 0) {
      if (++s >= this.summary.length) return -1;
      bits = this.summary[s];
    }
    const word = (s << 5) + ctz(bits);
    return (word << 5) + ctz(this.words[word]);
  }
}

const ctz = (x: number): number => 31 - Math.clz32(x & -x);
