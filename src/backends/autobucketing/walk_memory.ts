// The last blocked walk to each collective (torch_scheduler.ts: probePath records it, replayWalk
// replays it), with the nodes it passed indexed the other way round. A walk replays only while
// every node it passed is unscheduled and not the overlap node; rather than check that of each
// node at every scan, a walk is forgotten when a node it passed is scheduled or becomes the
// overlap node of a scan. A node it passed that is not a wait stays passable for good (compute
// nodes and unscheduled collectives block, and a collective never becomes unscheduled again),
// so only the waits it passed are kept for the replay to ask again.

export class WalkMemory {
  private readonly blocker: Int32Array; // per target: where its walk stopped, -1: no walk kept
  private readonly passedWaits: (Int32Array | undefined)[]; // per target: the waits among them
  private readonly version: Int32Array; // per target: bumped whenever its walk is forgotten
  private readonly watchers: (number[] | undefined)[]; // per node: (target, version) of walks through it
  private readonly inScan: Uint8Array; // nodes that are the overlap node of a scan in progress

  constructor(n: number) {
    this.blocker = new Int32Array(n).fill(-1);
    this.passedWaits = new Array(n);
    this.version = new Int32Array(n);
    this.watchers = new Array(n);
    this.inScan = new Uint8Array(n);
  }

  /** Where the target's walk stopped, if the walk may still replay; -1 otherwise. */
  blockerOf(target: number): number {
    return this.blocker[target];
  }

  /** The waits the target's walk passed (ask again whether they still let it pass). */
  waitsOf(target: number): Int32Array {
    return this.passedWaits[target] ?? NONE;
  }

  forget(target: number): void {
    if (this.blocker[target] < 0) return;
    this.blocker[target] = -1;
    this.passedWaits[target] = undefined;
    this.version[target]++;
  }

  /**
   * Keeps the walk `path` to `target` (its last node the blocker). A walk through the overlap node
   * of an enclosing scan is not kept: it cannot replay under that node, which is scheduled before
   * any other scan.
   */
  record(target: number, path: readonly number[], isWait: (x: number) => boolean): void {
    this.forget(target);
    const last = path.length - 1;
    for (let i = 0; i < last; i++) if (this.inScan[path[i]]) return;
    const waits: number[] = [];
    const v = this.version[target];
    for (let i = 0; i < last; i++) {
      const x = path[i];
      if (isWait(x)) waits.push(x);
      const w = this.watchers[x];
      if (w) w.push(target, v);
      else this.watchers[x] = [target, v];
    }
    this.blocker[target] = path[last];
    if (waits.length > 0) this.passedWaits[target] = Int32Array.from(waits);
  }

  /** `x` is scheduled or is about to be the overlap node: no walk through it replays any more. */
  passedNodeGone(x: number): void {
    const w = this.watchers[x];
    if (w === undefined) return;
    this.watchers[x] = undefined;
    for (let k = 0; k < w.length; k += 2) if (this.version[w[k]] === w[k + 1]) this.forget(w[k]);
  }

  /** A scan with `overlap` begins (its node is scheduled once the scan ends). */
  enterScan(overlap: number): void {
    this.passedNodeGone(overlap);
    this.inScan[overlap] = 1;
  }

  leaveScan(overlap: number): void {
    this.inScan[overlap] = 0;
  }
}

const NONE = new Int32Array(0);
