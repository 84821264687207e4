// Compute slowed by collectives in flight on the same GPU (docs/ARCHITECTURE.md §5): NCCL's kernels
// hold SMs a compute kernel cannot share and move their bytes through HBM two or three times (a
// maintainer in NVIDIA/nccl#1428, #689), so a kernel overlapped with a collective runs slower than
// alone. The rate is the cost model's overlapSlowdown (a hardware constant, estimate/hardware.ts):
// while any comm stream of the rank is busy, compute progresses at 1 / (1 + slowdown). A collective
// counts once the engine has timed it (every member issued): in a run whose ranks differ, compute a
// rank runs before a later rank issues the collective is not slowed by it.

/** A rank's collectives in flight: [start, end) intervals, µs, in no order, overlapping allowed. */
export class CommBusy {
  private starts: number[] = [];
  private ends: number[] = [];

  add(startUs: number, endUs: number): void {
    if (endUs <= startUs) return;
    this.starts.push(startUs);
    this.ends.push(endUs);
  }

  /**
   * When work of `us` µs at full rate, started at `t0`, ends: stretched by (1 + slowdown) where a
   * collective is in flight.
   */
  finish(t0: number, us: number, slowdown: number): number {
    const n = this.starts.length;
    if (n === 0 || slowdown === 0 || us === 0) return t0 + us;
    const order = n === 1 ? [0] : [...this.starts.keys()].sort((a, b) => this.starts[a] - this.starts[b]);
    let t = t0;
    let left = us;
    for (let k = 0; k < n; ) {
      // the union of the busy intervals that overlap from here on
      let a = this.starts[order[k]];
      let b = this.ends[order[k]];
      for (k++; k < n && this.starts[order[k]] <= b; k++) b = Math.max(b, this.ends[order[k]]);
      a = Math.max(a, t);
      if (b <= a) continue;
      if (a - t >= left) return t + left;
      left -= a - t;
      const done = (b - a) / (1 + slowdown);
      if (done >= left) return a + left * (1 + slowdown);
      left -= done;
      t = b;
    }
    return t + left;
  }

  /** Forgets the collectives that ended by `t0` (the compute stream has passed them). */
  prune(t0: number): void {
    let w = 0;
    for (let i = 0; i < this.starts.length; i++) {
      if (this.ends[i] <= t0) continue;
      this.starts[w] = this.starts[i];
      this.ends[w++] = this.ends[i];
    }
    this.starts.length = this.ends.length = w;
  }
}
