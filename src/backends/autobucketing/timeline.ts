// One process group's timeline for the bucketer (torch PGEvent list): its collective starts,
// waits and the compute that hides them, in schedule order, chained by extra dependencies in the
// augmented graph because one NCCL stream runs the group's collectives in issue order.
// `tryAdd` ports OverlapPreservingBucketer._can_add_to_bucket's four placements.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_preserving_bucketer.py

import type { GraphIndex } from '../graph_index';
import type { ReasonCode } from '../types';
import type { AugmentedGraph } from './aug_graph';
import type { CollState, ScheduleResult } from './scheduler';

const START = 0;
const WAIT = 1;
const COMPUTE = 2;

/** Why a placement failed; `node` is the hiding compute left outside, for 'hiding'. */
export type RefusalKind = 'hiding' | 'enclosed' | 'path_starts' | 'path_waits';

export interface Refusal {
  readonly kind: RefusalKind;
  readonly node: number;
}

const ENCLOSED: Refusal = { kind: 'enclosed', node: -1 };
const PATH_STARTS: Refusal = { kind: 'path_starts', node: -1 };
const PATH_WAITS: Refusal = { kind: 'path_waits', node: -1 };

export const REFUSAL_CODE: Readonly<Record<RefusalKind, ReasonCode>> = {
  hiding: 'not_bucketed_hiding_compute_not_between',
  enclosed: 'not_bucketed_would_expose',
  path_starts: 'not_bucketed_path_between_starts',
  path_waits: 'not_bucketed_path_between_starts',
};

/**
 * Is some (h0, h1) of `hid` strictly inside some (x0, x1) of `exec` (flat pairs)? Sort exec by x0
 * and keep a prefix max of x1: O((H + E) log E) instead of H × E.
 */
export function anyEnclosed(hid: readonly number[], exec: readonly number[]): boolean {
  const E = exec.length >> 1;
  if (E === 0 || hid.length === 0) return false;
  const idx = Array.from({ length: E }, (_, i) => i).sort((a, b) => exec[2 * a] - exec[2 * b]);
  const x0 = new Float64Array(E);
  const maxX1 = new Float64Array(E);
  let m = -Infinity;
  for (let k = 0; k < E; k++) {
    x0[k] = exec[2 * idx[k]];
    m = Math.max(m, exec[2 * idx[k] + 1]);
    maxX1[k] = m;
  }
  for (let h = 0; h < hid.length; h += 2) {
    // last exec interval with x0 < h0
    let lo = 0;
    let hi = E;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (x0[mid] < hid[h]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && maxX1[lo - 1] > hid[h + 1]) return true;
  }
  return false;
}

export class Timeline {
  private readonly evNode: number[] = [];
  private readonly evType: number[] = [];
  private readonly prev: number[] = [];
  private readonly next: number[] = [];
  private readonly nodeToEvent: Int32Array;
  private readonly colls: readonly CollState[];
  private readonly member: Int32Array; // stamp: node is a start / wait of the bucket being tried
  private stamp = 0;
  private readonly hid: number[] = []; // flat (start, hiding) pairs
  private readonly exec: number[] = []; // flat (start, wait) pairs

  constructor(
    private readonly ix: GraphIndex,
    private readonly sched: ScheduleResult,
    group: number,
    private readonly aug: AugmentedGraph,
  ) {
    this.colls = sched.colls;
    this.nodeToEvent = new Int32Array(ix.n).fill(-1);
    this.member = new Int32Array(ix.n);
    const hiding = new Set<number>();
    let last = -1;
    for (const node of sched.order) {
      let type = -1;
      const c = sched.collOfStart[node];
      const wc = ix.collOfWait[node] >= 0 ? sched.collOfStart[ix.collOfWait[node]] : -1;
      if (c >= 0 && this.colls[c].group === group) {
        type = START;
        for (const hn of this.colls[c].hiding) hiding.add(hn);
      } else if (wc >= 0) {
        if (this.colls[wc].group === group) type = WAIT;
        else if (hiding.has(node)) type = COMPUTE;
      } else if (ix.isCompute[node] || hiding.has(node)) type = COMPUTE;
      if (type < 0) continue;
      const e = this.evNode.length;
      this.evNode.push(node);
      this.evType.push(type);
      this.prev.push(last);
      this.next.push(-1);
      if (last >= 0) {
        this.next[last] = e;
        aug.addExtraDep(node, this.evNode[last]);
      }
      this.nodeToEvent[node] = e;
      last = e;
    }
  }

  /** null when `cand` was merged into the bucket (augmented graph updated), else why not. */
  tryAdd(bucket: readonly number[], cand: number): Refusal | null {
    const e = this.colls[bucket[0]];
    const c = this.colls[cand];
    // early start / late wait is the most likely to work
    const placements: [number, number][] = [
      [e.start, c.wait],
      [e.start, e.wait],
      [c.start, c.wait],
      [c.start, e.wait],
    ];
    let refusal: Refusal = PATH_STARTS;
    for (const [startAt, waitAt] of placements) {
      const r = this.tryPlacement(bucket, cand, startAt, waitAt);
      if (r === null) return null;
      refusal = r;
    }
    return refusal;
  }

  private tryPlacement(bucket: readonly number[], cand: number, startAt: number, waitAt: number): Refusal | null {
    const refusal = this.preservesHidingIntervals(bucket, cand, startAt, waitAt);
    if (refusal !== null) return refusal;
    const e = this.colls[bucket[0]];
    const c = this.colls[cand];
    const startToMove = startAt === e.start ? c.start : e.start;
    const [sp, sn] = this.remove(startToMove);
    if (this.aug.hasPath(e.start, c.start) || this.aug.hasPath(c.start, e.start)) {
      this.restore(startToMove, sp, sn);
      return PATH_STARTS;
    }
    // merging the starts adds no wait-to-wait path (it would imply a start-to-start one), so both checks run first
    const waitToMove = waitAt === e.wait ? c.wait : e.wait;
    const [wp, wn] = this.remove(waitToMove);
    if (this.aug.hasPath(e.wait, c.wait) || this.aug.hasPath(c.wait, e.wait)) {
      this.restore(waitToMove, wp, wn);
      this.restore(startToMove, sp, sn);
      return PATH_WAITS;
    }
    this.aug.merge(startAt, startToMove);
    this.aug.merge(waitAt, waitToMove);
    const se = this.nodeToEvent[startAt];
    const we = this.nodeToEvent[waitAt];
    this.nodeToEvent[c.start] = se;
    this.nodeToEvent[e.start] = se;
    this.nodeToEvent[c.wait] = we;
    this.nodeToEvent[e.wait] = we;
    return null;
  }

  private remove(node: number): [number, number] {
    const ev = this.nodeToEvent[node];
    const p = this.prev[ev];
    const q = this.next[ev];
    if (p >= 0) {
      this.next[p] = q;
      this.aug.removeExtraDep(this.evNode[ev], this.evNode[p]);
    }
    if (q >= 0) {
      this.prev[q] = p;
      this.aug.removeExtraDep(this.evNode[q], this.evNode[ev]);
    }
    if (p >= 0 && q >= 0) this.aug.addExtraDep(this.evNode[q], this.evNode[p]);
    this.prev[ev] = -1;
    this.next[ev] = -1;
    return [p, q];
  }

  private restore(node: number, p: number, q: number): void {
    const ev = this.nodeToEvent[node];
    this.prev[ev] = p;
    this.next[ev] = q;
    if (p >= 0) {
      this.next[p] = ev;
      this.aug.addExtraDep(this.evNode[ev], this.evNode[p]);
    }
    if (q >= 0) {
      this.prev[q] = ev;
      this.aug.addExtraDep(this.evNode[q], this.evNode[ev]);
    }
    if (p >= 0 && q >= 0) this.aug.removeExtraDep(this.evNode[q], this.evNode[p]);
  }

  /** torch _preserves_hiding_intervals: (1) hiding compute stays inside; (2) no enclosed hiding interval. */
  private preservesHidingIntervals(bucket: readonly number[], cand: number, startAt: number, waitAt: number): Refusal | null {
    const stamp = ++this.stamp;
    const ns = this.nodeToEvent[startAt];
    const nw = this.nodeToEvent[waitAt];
    const hid = this.hid;
    hid.length = 0;
    const mark = (x: number): Refusal | null => {
      const info = this.colls[x];
      this.member[info.start] = stamp;
      this.member[info.wait] = stamp;
      for (const hn of info.hiding) {
        const p = this.nodeToEvent[hn];
        if (p < 0) continue;
        if (!(ns < p && p < nw)) return { kind: 'hiding', node: hn };
        hid.push(ns, p);
      }
      return null;
    };
    const r0 = mark(cand);
    if (r0 !== null) return r0;
    for (const x of bucket) {
      const r = mark(x);
      if (r !== null) return r;
    }
    const e = this.colls[bucket[0]];
    const c = this.colls[cand];
    const latestStart = Math.max(this.nodeToEvent[c.start], this.nodeToEvent[e.start]);
    const earliestWait = Math.min(this.nodeToEvent[c.wait], this.nodeToEvent[e.wait]);
    const exec = this.exec;
    exec.length = 0;
    exec.push(ns, nw);
    const collect = (ev: number) => {
      const node = this.evNode[ev];
      const t = this.evType[ev];
      if (t === COMPUTE || this.member[node] === stamp) return;
      const ci = t === START ? this.sched.collOfStart[node] : this.sched.collOfStart[this.ix.collOfWait[node]];
      const info = this.colls[ci];
      const se = this.nodeToEvent[info.start];
      const we = this.nodeToEvent[info.wait];
      if (se < 0 || we < 0) return;
      exec.push(se, we);
      for (const hn of info.hiding) if (this.nodeToEvent[hn] >= 0) hid.push(se, this.nodeToEvent[hn]);
    };
    for (let ev = this.next[ns]; ev >= 0 && ev < latestStart; ev = this.next[ev]) collect(ev);
    for (let ev = this.prev[nw]; ev >= 0 && ev > earliestWait; ev = this.prev[ev]) collect(ev);
    return anyEnclosed(hid, exec) ? ENCLOSED : null;
  }
}
