// Overlap scheduler: a TypeScript port of torch 2.11's OverlapScheduler (the scheduling half of
// schedule_overlap_bucketing, PR #163960 and follow-ups).
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py
//
// Ready nodes come from two min-heaps: on-path nodes keyed (domination index, local priority,
// original index) and off-path nodes (they feed no compute) keyed (blocks a reduce-scatter ? 0 : 1,
// original index), the latter released near their original position. At each compute node with
// estimated time t·compute_overlap_multipler we first hide in-flight collectives (oldest first,
// per process group), then prefetch later collectives within max_compute_pre_fetch /
// max_coll_distance and the in-flight and memory budgets. Over budget the oldest in-flight wait
// goes first; waits on one group complete in issue order. Differences from upstream: only
// matmul-like nodes hide communication (torch also credits memory-bound kernels when it has an
// estimate for them), and ancestor sets are replaced by bounded backward searches.

import type { CostModel } from '../../estimate/types';
import type { GraphIndex } from '../graph_index';
import { TupleHeap } from '../heap';
import { buildMemoryTables, IncrementalMemory, type MemoryTables } from '../memory_tracker';
import type { ReasonCode } from '../types';
import { PrefetchBudget } from './budget';
import { baselineMemory, identifyCollectives, type CollState } from './collectives';

export type { CollState } from './collectives';
import { computeDomination, OFF_PATH, type Domination } from './domination';
import { gbToBytes, type AutobucketingOptions } from './options';

export interface ScheduleResult {
  readonly order: Int32Array; // graph-index node numbers in execution order
  readonly colls: readonly CollState[]; // ordered by start
  readonly collOfStart: Int32Array; // node → collective number, -1
  readonly groups: readonly string[];
  readonly originalPeakBytes: number;
  readonly allowedPeakBytes: number;
  readonly peakBytes: number;
  readonly dom: Domination;
}

const END = -1;

/**
 * Runs the scheduler. `memoryHeadroomBytes` lowers the allowed peak below torch's budget; the
 * backend retries with headroom when an order overshoots (torch's checks are estimates).
 * `offPathInOrder` releases every off-path node (not only those feeding a reduce-scatter) once
 * the on-path order passes its original position: an off-path compute node such as the loss
 * otherwise waits for the end and keeps its inputs (the logits) alive — with activation
 * checkpointing that alone overshoots the budget. Off by default (the pinned schedules).
 */
export function scheduleOverlap(
  index: GraphIndex,
  cost: CostModel,
  opts: AutobucketingOptions,
  tables: MemoryTables = buildMemoryTables(index),
  memoryHeadroomBytes = 0,
  offPathInOrder = false,
): ScheduleResult {
  return new OverlapScheduler(index, cost, opts, tables, memoryHeadroomBytes, offPathInOrder).run();
}

class OverlapScheduler {
  private readonly dom: Domination;
  private readonly colls: CollState[];
  private readonly collOf: Int32Array; // start node → coll
  private readonly waitColl: Int32Array; // wait node → coll
  private readonly groups: readonly string[];
  private readonly next: Int32Array; // unscheduled collectives, a linked list in start order
  private readonly prev: Int32Array;
  private head = END;
  private readonly inDeg: Int32Array;
  private readonly scheduled: Uint8Array;
  private readonly order: number[] = [];
  private readonly mem: IncrementalMemory;
  private readonly budget: PrefetchBudget;
  private readonly inFlight = new Map<number, true>(); // insertion order = issue order
  private inFlightBytes = 0;
  private readonly onPath = new TupleHeap();
  private readonly offPath = new TupleHeap();
  private curCompute = 0;
  private lastOnPath = -1;
  private readonly maxInFlightBytes: number;
  private readonly originalPeak: number;
  private readonly allowedPeak: number;
  /** allowedPeak less the retry headroom: what the checks compare against. */
  private readonly budgetPeak: number;
  private readonly mark: Int32Array;
  private stamp = 0;
  private readonly stack: number[] = [];
  /** Per collective: the unscheduled compute node / collective its prefetch path last hit (-1 none). */
  private readonly blockedBy: Int32Array;

  private readonly allocBytes: Float64Array;

  constructor(
    private readonly ix: GraphIndex,
    private readonly cost: CostModel,
    private readonly opts: AutobucketingOptions,
    tables: MemoryTables,
    headroom: number,
    private readonly offPathInOrder: boolean,
  ) {
    const n = ix.n;
    this.dom = computeDomination(ix);
    const found = identifyCollectives(ix, cost);
    this.colls = found.colls;
    this.collOf = found.collOf;
    this.waitColl = found.waitColl;
    this.groups = found.groups;
    const C = this.colls.length;
    this.next = new Int32Array(C);
    this.prev = new Int32Array(C);
    for (let c = 0; c < C; c++) {
      this.next[c] = c + 1 < C ? c + 1 : END;
      this.prev[c] = c - 1;
    }
    this.head = C > 0 ? 0 : END;
    const base = baselineMemory(ix, tables);
    this.allocBytes = base.allocBytes;
    this.originalPeak = base.peakBytes;
    const increase = Math.max(gbToBytes(opts.max_memory_increase_gb), Math.floor(base.peakBytes * opts.max_memory_increase_ratio));
    this.allowedPeak = base.peakBytes + increase;
    this.budgetPeak = this.allowedPeak - headroom;
    this.maxInFlightBytes = gbToBytes(opts.max_in_flight_gb);
    this.budget = new PrefetchBudget(base.beforeCompute);
    this.mem = new IncrementalMemory(tables);
    this.inDeg = new Int32Array(n);
    for (let i = 0; i < n; i++) this.inDeg[i] = ix.predOff[i + 1] - ix.predOff[i];
    this.scheduled = new Uint8Array(n);
    this.mark = new Int32Array(n);
    this.blockedBy = new Int32Array(this.colls.length).fill(-1);
  }

  run(): ScheduleResult {
    for (let i = 0; i < this.ix.n; i++) if (this.inDeg[i] === 0) this.addReady(i);
    while (this.onPath.size > 0 || this.offPath.size > 0) {
      if (this.shouldForceWait()) {
        this.forceOldestWait();
        continue;
      }
      const node = this.nextNode();
      if (this.scheduled[node]) continue;
      if (this.collOf[node] >= 0) this.handleCollectiveStart(this.collOf[node]);
      else if (this.waitColl[node] >= 0) this.handleWait(node);
      else this.handleComputeOrOther(node);
      if (this.dom.computeDom[node] !== OFF_PATH) this.lastOnPath = Math.max(this.lastOnPath, node);
    }
    return {
      order: Int32Array.from(this.order),
      colls: this.colls,
      collOfStart: this.collOf,
      groups: this.groups,
      originalPeakBytes: this.originalPeak,
      allowedPeakBytes: this.allowedPeak,
      peakBytes: this.mem.peak,
      dom: this.dom,
    };
  }

  // ---- ready queues ------------------------------------------------------------------------

  private addReady(node: number): void {
    const d = this.dom.computeDom[node];
    if (d === OFF_PATH) {
      this.offPath.push(this.dom.dominatesRs[node] ? 0 : 1, node, 0, node);
      return;
    }
    let local = 0;
    const c = this.waitColl[node];
    if (c >= 0) local = this.colls[c].exposedUs !== 0 ? 1 : 0; // defer exposed waits locally
    else if (this.inUnaryChainToCollective(node)) local = -1; // pull the cheap chain feeding a collective
    this.onPath.push(d, local, node, node);
  }

  private inUnaryChainToCollective(start: number): boolean {
    const ix = this.ix;
    let cur = start;
    for (let hops = 0; hops < ix.n; hops++) {
      if (ix.succOff[cur + 1] - ix.succOff[cur] !== 1) return false;
      const user = ix.succIdx[ix.succOff[cur]];
      const inputs = ix.predOff[user + 1] - ix.predOff[user] + ix.placeholderInputs[user];
      if (inputs !== 1) return false;
      if (this.collOf[user] >= 0 && !this.scheduled[user]) return true;
      const kind = ix.nodes[user].kind;
      if (kind !== 'cast' && kind !== 'view') return false;
      cur = user;
    }
    return false;
  }

  /** Off-path nodes go near their original position; exposed off-path waits wait until hidden. */
  private nextNode(): number {
    if (this.offPath.size > 0) {
      const node = this.offPath.peek()!;
      let take = false;
      if (this.onPath.size === 0 || this.scheduled[node]) take = true;
      else if (this.waitColl[node] >= 0) {
        take = this.colls[this.waitColl[node]].exposedUs === 0 || this.mem.current > this.budgetPeak;
      } else if (this.dom.dominatesRs[node] || this.offPathInOrder) take = node <= this.lastOnPath;
      if (take) return this.offPath.pop();
    }
    return this.onPath.pop();
  }

  // ---- handlers ----------------------------------------------------------------------------

  private schedule(node: number): void {
    this.scheduled[node] = 1;
    this.order.push(node);
    this.mem.schedule(node);
    const ix = this.ix;
    for (let k = ix.succOff[node]; k < ix.succOff[node + 1]; k++) {
      const s = ix.succIdx[k];
      if (--this.inDeg[s] === 0) this.addReady(s);
    }
  }

  private shouldForceWait(): boolean {
    if (this.inFlight.size === 0) return false;
    return this.inFlightBytes >= this.maxInFlightBytes || this.mem.current > this.budgetPeak;
  }

  private oldestInFlight(): number {
    return this.inFlight.keys().next().value as number;
  }

  private forceOldestWait(): void {
    this.handleWait(this.colls[this.oldestInFlight()].wait);
  }

  private handleCollectiveStart(c: number): void {
    const info = this.colls[c];
    if (this.opts.assume_bucketing_reduces_latency) {
      // torch should_assume_bucketed: a same-key collective in flight will likely share a bucket,
      // so this one pays no launch latency (optimistic; the bucketer may not merge them)
      for (const other of this.inFlight.keys()) {
        if (this.colls[other].looseKey === info.looseKey) {
          info.exposedUs = Math.max(0, info.exposedUs - info.latencyUs);
          break;
        }
      }
    }
    this.inFlight.set(c, true);
    this.inFlightBytes += info.sizeBytes;
    const p = this.prev[c];
    const q = this.next[c];
    if (p !== END) this.next[p] = q;
    else this.head = q;
    if (q !== END) this.prev[q] = p;
    this.schedule(info.start);
  }

  private handleWait(wait: number): void {
    const c = this.waitColl[wait];
    const info = this.colls[c];
    // one NCCL stream per group: waiting on c also completes every earlier collective of its group
    const earlier: number[] = [];
    for (const other of this.inFlight.keys()) {
      if (other === c) break;
      if (this.colls[other].group === info.group) earlier.push(other);
    }
    for (const other of earlier) if (this.inFlight.has(other)) this.handleWait(this.colls[other].wait);
    if (info.exposedUs > 0) {
      // the compute stream idles on this collective: use the time to overlap other groups
      const remaining = this.reduceExposed(wait, info.exposedUs, info.group);
      this.scheduleForOverlap(wait, remaining, info.group);
    }
    this.inFlightBytes -= info.sizeBytes;
    this.inFlight.delete(c);
    this.schedule(wait);
  }

  private handleComputeOrOther(node: number): void {
    if (!this.ix.isCompute[node]) {
      this.schedule(node);
      return;
    }
    const t = this.cost.computeUs(this.ix.nodes[node]);
    const available = (Number.isFinite(t) && t > 0 ? t : 0) * this.opts.compute_overlap_multipler;
    const remaining = this.reduceExposed(node, available, -1);
    this.scheduleForOverlap(node, remaining, -1);
    this.schedule(node);
    this.curCompute++;
  }

  /** Hides in-flight collectives (oldest first) behind `available` µs, per group; returns what is left. */
  private reduceExposed(node: number, available: number, excludeGroup: number): Float64Array {
    const remaining = new Float64Array(this.groups.length).fill(available);
    if (excludeGroup >= 0) remaining[excludeGroup] = 0;
    for (const c of this.inFlight.keys()) {
      const info = this.colls[c];
      if (info.exposedUs === 0 || info.group === excludeGroup || remaining[info.group] <= 0) continue;
      const amount = Math.min(info.exposedUs, remaining[info.group]);
      info.exposedUs -= amount;
      remaining[info.group] -= amount;
      if (!info.hiding.includes(node)) info.hiding.push(node);
    }
    return remaining;
  }

  // ---- prefetching -------------------------------------------------------------------------

  private note(c: number, code: ReasonCode, overlap: number, a = 0, b = 0): void {
    const r = this.colls[c].reason;
    if (r === undefined) this.colls[c].reason = { code, overlap, a, b };
    else {
      r.code = code;
      r.overlap = overlap;
      r.a = a;
      r.b = b;
    }
  }

  private scheduleForOverlap(overlap: number, remaining: Float64Array, excludeGroup: number): void {
    let any = false;
    for (let g = 0; g < remaining.length; g++) if (remaining[g] > 0) any = true;
    if (!any) return;
    const { computeDom, dominatesRs } = this.dom;
    // candidates in torch's order: (priority class, domination index, original index); the list
    // is in start order, so per-class insertion sort is nearly linear
    const classes: number[][] = [[], [], [], []];
    let i = 0;
    for (let c = this.head; c !== END; c = this.next[c], i++) {
      if (i > this.opts.max_coll_distance) {
        this.note(c, 'not_prefetched_coll_distance', overlap);
        break;
      }
      const info = this.colls[c];
      if (info.group === excludeGroup) continue;
      const d = computeDom[info.start];
      if (d !== OFF_PATH && d - this.curCompute > this.opts.max_compute_pre_fetch) {
        this.note(c, 'not_prefetched_compute_distance', overlap, d - this.curCompute);
        continue;
      }
      // feeds the next compute node: most urgent; then off-path reduce-scatters; then on-path
      const cls = d === this.curCompute + 1 ? 0 : d === OFF_PATH ? (dominatesRs[info.start] ? 1 : 3) : 2;
      const list = classes[cls];
      let k = list.length;
      list.push(c);
      while (k > 0) {
        const prev = this.colls[list[k - 1]].start;
        const dp = computeDom[prev];
        if (dp < d || (dp === d && prev < info.start)) break;
        list[k] = list[k - 1];
        k--;
      }
      list[k] = c;
    }
    // The on-path memory test is monotone in (bytes, domination index) and candidates come in
    // increasing domination order, so once one fails, any later one at least as large fails too
    // until something is prefetched: skip those without searching (same decisions, less work).
    let failBytes = Infinity;
    let failLevel = 0;
    let failCode: ReasonCode = 'not_prefetched_memory_budget';
    for (const c of classes[0].concat(classes[1], classes[2], classes[3])) {
      const info = this.colls[c];
      const avail = remaining[info.group];
      if (avail <= 0 || this.scheduled[info.start]) continue;
      const onPath = computeDom[info.start] !== OFF_PATH;
      if (onPath && info.sizeBytes >= failBytes) {
        this.note(c, failCode, overlap, failLevel + info.sizeBytes, failCode === 'not_prefetched_memory_budget' ? this.budgetPeak : this.maxInFlightBytes);
        continue;
      }
      // torch checks memory before the path; we find the path first so its allocations count too
      // a path blocked by an unscheduled compute node or collective stays blocked until it runs
      const blocker = this.blockedBy[c];
      if (blocker >= 0 && !this.scheduled[blocker]) {
        this.note(c, 'not_prefetched_depends_on_compute', overlap, blocker);
        continue;
      }
      const path = this.findSchedulablePath(c, overlap);
      if (path === null) continue;
      let pathBytes = 0;
      for (const p of path) pathBytes += this.allocBytes[p];
      if (this.prefetchWouldExceedMemory(c, overlap, pathBytes)) {
        if (onPath && pathBytes === 0) {
          const r = info.reason!;
          failBytes = Math.min(failBytes, info.sizeBytes);
          failCode = r.code;
          failLevel = r.a - info.sizeBytes;
        }
        continue;
      }
      // make room in the in-flight budget by retiring waits that are already hidden
      while (
        this.inFlight.size > 0 &&
        this.maxInFlightBytes - this.inFlightBytes < info.sizeBytes &&
        this.waitIsHidden(this.oldestInFlight(), overlap)
      ) {
        this.forceOldestWait();
      }
      if (this.maxInFlightBytes - this.inFlightBytes < info.sizeBytes) {
        this.note(c, 'not_prefetched_in_flight_budget', overlap, this.inFlightBytes + info.sizeBytes, this.maxInFlightBytes);
        continue;
      }
      this.schedulePath(path);
      this.handleCollectiveStart(c);
      const d = computeDom[info.start];
      if (d !== OFF_PATH) this.budget.add(this.curCompute, d, info.sizeBytes + pathBytes);
      const amount = Math.min(avail, info.exposedUs);
      info.exposedUs -= amount;
      if (!info.hiding.includes(overlap)) info.hiding.push(overlap);
      remaining[info.group] -= amount;
      info.prefetchedBy = overlap;
      info.computeAtPrefetch = this.curCompute;
      failBytes = Infinity;
      let left = 0;
      for (let g = 0; g < remaining.length; g++) left += remaining[g];
      if (left === 0) break;
    }
  }

  /** torch _prefetch_would_exceed_memory_budget, with the reason recorded. */
  private prefetchWouldExceedMemory(c: number, overlap: number, pathBytes: number): boolean {
    const info = this.colls[c];
    const d = this.dom.computeDom[info.start];
    const size = info.sizeBytes + pathBytes;
    const allowed = this.budgetPeak;
    if (this.mem.current + size > allowed) {
      this.note(c, 'not_prefetched_memory_budget', overlap, this.mem.current + size, allowed);
      return true;
    }
    // off-path collectives (reduce-scatters) release memory later: only the current level matters
    if (d === OFF_PATH) return false;
    const [maxCum, maxTotal] = this.budget.query(this.curCompute, d);
    if (maxCum + size > this.maxInFlightBytes) {
      this.note(c, 'not_prefetched_in_flight_budget', overlap, maxCum + size, this.maxInFlightBytes);
      return true;
    }
    if (maxTotal + size > allowed) {
      this.note(c, 'not_prefetched_memory_budget', overlap, maxTotal + size, allowed);
      return true;
    }
    return false;
  }

  private waitIsHidden(c: number, overlap: number): boolean {
    const info = this.colls[c];
    return info.exposedUs === 0 && !info.hiding.includes(overlap);
  }

  /** Unscheduled ancestors of the collective, or null when one is compute, a collective or a wait that would be exposed. */
  private findSchedulablePath(c: number, overlap: number): number[] | null {
    const ix = this.ix;
    const stamp = ++this.stamp;
    const stack = this.stack;
    stack.length = 0;
    stack.push(this.colls[c].start);
    const path: number[] = [];
    while (stack.length > 0) {
      const x = stack.pop()!;
      for (let k = ix.predOff[x]; k < ix.predOff[x + 1]; k++) {
        const p = ix.predIdx[k];
        if (this.scheduled[p] || this.mark[p] === stamp) continue;
        this.mark[p] = stamp;
        const w = this.waitColl[p];
        if (ix.isCompute[p] || p === overlap || this.collOf[p] >= 0 || (w >= 0 && !this.waitIsHidden(w, overlap))) {
          this.note(c, 'not_prefetched_depends_on_compute', overlap, p);
          if (ix.isCompute[p] || this.collOf[p] >= 0) this.blockedBy[c] = p;
          return null;
        }
        path.push(p);
        stack.push(p);
      }
    }
    return path;
  }

  private schedulePath(path: number[]): void {
    path.sort((a, b) => a - b); // graph-index numbers are a topological order
    for (const p of path) {
      if (this.scheduled[p]) continue; // a forced wait may already have taken it
      if (this.waitColl[p] >= 0) this.handleWait(p);
      else this.schedule(p);
    }
  }
}
