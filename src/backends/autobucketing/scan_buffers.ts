// The working arrays of the overlap scheduler's prefetch scans (torch_scheduler.ts,
// scanCandidates). A scan runs at every compute node and wait, so its arrays are kept and reused
// rather than made per scan; a scan can start another (a wait it schedules prefetches behind
// itself), so there is one set per nesting depth.

import { CandidateOrder } from './candidate_order';

/** One scan's arrays: its candidates, what a visit of each would note, the blocked ones, their order. */
export class ScanBuffers {
  readonly cands: Int32Array;
  /** Per candidate number: the blocker a visit would note now, -1: the visit may do more. */
  readonly found: Int32Array;
  /** Candidate numbers found blocked, in registration order. */
  readonly blocked: Int32Array;
  readonly order = new CandidateOrder();

  constructor(capacity: number) {
    this.cands = new Int32Array(capacity);
    this.found = new Int32Array(capacity);
    this.blocked = new Int32Array(capacity);
  }
}

/** ScanBuffers by nesting depth, each holding up to `capacity` candidates. */
export class ScanStack {
  private readonly levels: ScanBuffers[] = [];
  private depth = 0;

  constructor(private readonly capacity: number) {}

  /** The buffers of a scan that begins now; leave() when it ends. */
  enter(): ScanBuffers {
    if (this.depth === this.levels.length) this.levels.push(new ScanBuffers(this.capacity));
    return this.levels[this.depth++];
  }

  leave(): void {
    this.depth--;
  }
}
