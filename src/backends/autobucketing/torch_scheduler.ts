// Overlap scheduler: a decision-by-decision port of torch 2.13's OverlapScheduler, the scheduling
// half of schedule_overlap_bucketing (PR #163960 and follow-ups).
// Upstream: https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_inductor/fx_passes/overlap_scheduling.py
//
// Ready nodes come from two heaps: on-path nodes keyed (domination index, local priority, index)
// and off-path nodes (they feed no compute) keyed (blocks a reduce-scatter ? 0 : 1, index). Every
// node with a runtime estimate above 0 — matmuls, but also casts, norms, the loss — first hides
// in-flight collectives (oldest first, per process group) and then prefetches later collectives
// within max_compute_pre_fetch, max_coll_distance, the in-flight budget and the memory budget.
// Times are kept in ms, as torch keeps them, so float comparisons (exposed == 0) agree bit for bit.

import { PrefetchBudget } from './budget';
import type { CandidateOrder } from './candidate_order';
import { gbToBytes, type AutobucketingOptions } from './options';
import { PyHeap } from '../../graph';
import { OrderedBits } from './ordered_bits';
import { type ScanBuffers, ScanStack } from './scan_buffers';
import { TargetReach } from './reach';
import { NodeClass, type TorchGraph } from './torch_graph';
import { TorchMemoryTracker, torchBaseline } from './torch_memory';
import { WalkMemory } from './walk_memory';
import { sortAscending, weakMemo } from '../../util';

/** torch's sys.maxsize: the node blocks no compute (or no reduce-scatter). */
export const OFF_PATH = Number.MAX_SAFE_INTEGER;

/** Why a prefetch behind `overlap` was refused, with what the explain panel's sentence needs. */
export type PrefetchRefusal =
  | { readonly code: 'not_prefetched_compute_distance'; readonly overlap: number; readonly computeNodesAhead: number }
  | {
      readonly code: 'not_prefetched_in_flight_budget' | 'not_prefetched_memory_budget';
      readonly overlap: number;
      readonly bytes: number;
      readonly limitBytes: number;
    }
  | { readonly code: 'not_prefetched_depends_on_compute'; readonly overlap: number; readonly blocker: number };

/** torch CollectiveInfo, plus what the explain panel needs. */
export interface CollInfo {
  readonly start: number; // torch node
  readonly wait: number;
  readonly reg: number; // registration number (torch's collective_info order)
  readonly sizeBytes: number;
  readonly estMs: number;
  exposedMs: number;
  readonly hiding: number[]; // torch's OrderedSet of hiding nodes, in insertion order
  /** The node whose time first pulled it forward (a prefetch), -1 when issued from its queue. */
  prefetchedBy: number;
  computeAtPrefetch: number;
  /** The last reason it was not prefetched (torch's "cannot overlap" log line). */
  reason?: PrefetchRefusal;
}

export interface OverlapResult {
  readonly tg: TorchGraph;
  /** Torch nodes in scheduled order (placeholders and the output included). */
  readonly order: readonly number[];
  /** Collectives in torch's registration order (by wait position). */
  readonly colls: readonly CollInfo[];
  readonly infoOf: ReadonlyMap<number, CollInfo>; // start → info
  readonly computeDom: Float64Array;
  readonly originalPeakBytes: number;
  readonly allowedPeakBytes: number;
  /** torch memory_tracker.peak_memory of the new order. */
  readonly peakBytes: number;
  /** torch total_exposed_ms (the scheduler's own accounting) and total_potential_exposed_ms. */
  readonly totalExposedMs: number;
  readonly potentialExposedMs: number;
}

export function scheduleOverlap(tg: TorchGraph, opts: AutobucketingOptions): OverlapResult {
  return new OverlapScheduler(tg, opts).run();
}

class OverlapScheduler {
  private readonly n: number;
  private readonly computeDom: Float64Array;
  private readonly rsDom: Float64Array;
  private readonly computeCount: number;
  private readonly infoOf = new Map<number, CollInfo>();
  private readonly infoAt: (CollInfo | undefined)[]; // the same, by torch node
  private readonly colls: CollInfo[] = [];
  private readonly pgs: string[] = []; // torch all_pgs, first registration first
  private readonly pgOf: Int32Array; // collective start → its group's number in pgs
  /** Unscheduled collectives: a linked list in registration order (torch's OrderedSet). */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly unscheduled: Uint8Array;
  private readonly inDegree: Int32Array;
  private readonly scheduled: Uint8Array;
  private readonly order: number[] = [];
  private readonly mem: TorchMemoryTracker;
  private readonly budget: PrefetchBudget;
  private readonly originalPeak: number;
  private readonly allowedPeak: number;
  private readonly maxInFlight: number;
  private readonly maxOffBucket: number | null;
  private readonly inFlight = new Map<number, CollInfo>(); // insertion order = issue order
  private inFlightBytes = 0;
  private readonly onPath = new PyHeap();
  private readonly offPath = new PyHeap();
  private readonly offPathPotential = new Map<string, number>();
  private currentCompute = 0;
  private lastOnPath = -1;
  /**
   * Registration numbers of the unscheduled collectives a prefetch may consider now: off-path, or within
   * max_compute_pre_fetch.
   */
  private readonly eligible: OrderedBits;
  /** On-path collectives by domination index, and how many of them have become eligible. */
  private readonly byDom: CollInfo[];
  private domCursor = 0;
  /** The last prefetch scan: its overlap node and compute index (for the explain panel's distance reason). */
  private readonly lastScan = { overlap: -1, compute: 0 };
  private scheduledCount = 0;
  private readonly seen: Int32Array;
  private stamp = 0;
  /** Per collective start: an unscheduled compute node or collective its path last ran into (-1 none). */
  private readonly blockedBy: Int32Array;
  /** Per collective start: its last blocked walk, while it may replay (replayWalk, walk_memory.ts). */
  private readonly walks: WalkMemory;
  /** c10d / DTensor ops torch does not schedule as collectives (a wait on a graph input): they block a prefetch. */
  private readonly c10Op: Uint8Array;
  private readonly startOfReg: Int32Array; // registration number → collective start
  /** Per group number: handleWait calls prefetching behind one of its waits right now (behindWaitInProgress). */
  private readonly waiting: Int32Array;
  /** Per collective start: its wait is being handled (torch 2.15's wait_starts_being_handled). */
  private readonly handling: Uint8Array;
  /** Per collective start: its bucket key (tg.fullKey) as a small integer, for grouping candidates. */
  private readonly keyId: Int32Array;
  /** Per node: the overlap node and blocker of its last refusal when that was noteBlocked()'s (else -1). */
  private readonly blockedNote: Int32Array;
  /** Per node: when its last note was made, on a clock that counts notes (blockedAsOf). */
  private readonly noteSeq: Int32Array;
  private noteClock = 0;
  private readonly scans: ScanStack;

  constructor(
    private readonly tg: TorchGraph,
    private readonly opts: AutobucketingOptions,
  ) {
    const n = (this.n = tg.n);
    this.computeDom = domination(tg, (t) => tg.cls[t] === NodeClass.Compute);
    // torch finds reduce_scatter_tensor nodes: a coalesced one (no bucket key) is not among them
    const isRs = (t: number) => tg.cls[t] === NodeClass.Collective && tg.ix.nodes[tg.irOf[t]].kind === 'reduce_scatter';
    this.rsDom = domination(tg, (t) => isRs(t) && tg.bucketKey[t] !== '');
    let computes = 0;
    for (let t = 0; t < n; t++) if (tg.cls[t] === NodeClass.Compute) computes++;
    this.computeCount = computes;
    this.pgOf = new Int32Array(n).fill(-1);
    this.infoAt = new Array(n);
    for (const start of tg.collectives) this.register(start);
    this.next = new Int32Array(n).fill(-1);
    this.prev = new Int32Array(n).fill(-1);
    this.unscheduled = new Uint8Array(n);
    let last = -1;
    for (const info of this.colls) {
      const s = info.start;
      this.unscheduled[s] = 1;
      if (last >= 0) this.next[last] = s;
      this.prev[s] = last;
      last = s;
    }
    const base = torchBaseline(tg);
    this.originalPeak = base.peakBytes;
    this.allowedPeak =
      base.peakBytes +
      Math.max(gbToBytes(opts.max_memory_increase_gb), Math.floor(base.peakBytes * opts.max_memory_increase_ratio));
    this.budget = new PrefetchBudget(base.beforeCompute);
    this.mem = new TorchMemoryTracker(tg);
    this.maxInFlight = gbToBytes(opts.max_in_flight_gb);
    this.maxOffBucket = opts.max_off_bucket_gb > 0 ? gbToBytes(opts.max_off_bucket_gb) : null;
    this.inDegree = new Int32Array(n);
    for (let t = 0; t < n; t++) this.inDegree[t] = tg.parOff[t + 1] - tg.parOff[t];
    this.scheduled = new Uint8Array(n);
    this.seen = new Int32Array(n);
    this.blockedBy = new Int32Array(n).fill(-1);
    this.blockedNote = new Int32Array(2 * n).fill(-1);
    this.noteSeq = new Int32Array(n);
    this.walks = new WalkMemory(n);
    this.c10Op = new Uint8Array(n);
    // only an imported graph has targets to read
    if (tg.ix.graph.meta.model === 'fx-import') {
      for (let t = 0; t < n; t++) {
        const ir = tg.irOf[t];
        if (ir < 0 || tg.cls[t] === NodeClass.Wait || tg.cls[t] === NodeClass.Collective) continue;
        if (/c10|_dtensor/.test(String(tg.ix.nodes[ir].attrs?.target ?? ''))) this.c10Op[t] = 1;
      }
    }
    this.startOfReg = Int32Array.from(this.colls, (c) => c.start);
    this.waiting = new Int32Array(this.pgs.length);
    this.handling = new Uint8Array(n);
    const ids = new Map<string, number>();
    this.keyId = new Int32Array(n);
    for (const start of tg.collectives) {
      const key = tg.fullKey[start];
      if (!ids.has(key)) ids.set(key, ids.size);
      this.keyId[start] = ids.get(key)!;
    }
    this.eligible = new OrderedBits(this.colls.length);
    // torch takes a first candidate before it checks max_coll_distance
    this.scans = new ScanStack(Math.max(1, Math.min(opts.max_coll_distance, this.colls.length)));
    this.byDom = this.colls
      .filter((c) => this.computeDom[c.start] !== OFF_PATH)
      .sort((a, b) => this.computeDom[a.start] - this.computeDom[b.start]);
    this.colls.forEach((c, k) => {
      if (this.computeDom[c.start] === OFF_PATH) this.eligible.add(k);
    });
    for (let t = 0; t < n; t++) if (this.inDegree[t] === 0) this.addToReadyQueue(t);
  }

  private register(start: number): void {
    if (this.infoOf.has(start)) return;
    const tg = this.tg;
    const est = tg.estUs[start] / 1000;
    const info: CollInfo = {
      start,
      wait: tg.waitOf[start],
      reg: this.colls.length,
      sizeBytes: tg.sizeBytes[start],
      estMs: est,
      exposedMs: est,
      hiding: [],
      prefetchedBy: -1,
      computeAtPrefetch: -1,
    };
    this.infoOf.set(start, info);
    this.infoAt[start] = info;
    this.colls.push(info);
    if (!this.pgs.includes(tg.group[start])) this.pgs.push(tg.group[start]);
    this.pgOf[start] = this.pgs.indexOf(tg.group[start]);
  }

  run(): OverlapResult {
    while (this.onPath.size > 0 || this.offPath.size > 0) {
      if (this.shouldForceWaitForMemory()) {
        this.forceOldestWait();
        continue;
      }
      for (const node of this.nextNodes()) {
        if (this.scheduled[node]) continue;
        const cls = this.tg.cls[node];
        if (cls === NodeClass.Placeholder) this.schedule(node);
        else if (cls === NodeClass.Collective) this.handleCollectiveStart(node);
        else if (cls === NodeClass.Wait) this.handleWait(node);
        else this.handleComputeOrOther(node);
        if (this.computeDom[node] !== OFF_PATH) this.lastOnPath = Math.max(this.lastOnPath, node);
        else if (cls === NodeClass.Collective) this.addPotential(node, -this.tg.sizeBytes[node]);
      }
    }
    this.settleBlockedNotes();
    let total = 0;
    let potential = 0;
    for (const c of this.colls) {
      total += c.exposedMs;
      potential += c.estMs;
    }
    return {
      tg: this.tg,
      order: this.order,
      colls: this.colls,
      infoOf: this.infoOf,
      computeDom: this.computeDom,
      originalPeakBytes: this.originalPeak,
      allowedPeakBytes: this.allowedPeak,
      peakBytes: this.mem.peak,
      totalExposedMs: total,
      potentialExposedMs: potential,
    };
  }

  // ---- ready queues ------------------------------------------------------------------------

  private offComputePath(t: number): boolean {
    return this.computeDom[t] === OFF_PATH;
  }

  private addPotential(start: number, bytes: number): void {
    const key = this.tg.fullKey[start];
    this.offPathPotential.set(key, (this.offPathPotential.get(key) ?? 0) + bytes);
  }

  private addToReadyQueue(t: number): void {
    if (this.offComputePath(t)) {
      this.offPath.push([this.rsDom[t] !== OFF_PATH ? 0 : 1, t], t);
      if (this.infoOf.has(t)) this.addPotential(t, this.tg.sizeBytes[t]);
      return;
    }
    let local = 0;
    if (this.tg.cls[t] === NodeClass.Wait) local = this.infoAt[this.tg.startOf[t]]!.exposedMs !== 0 ? 1 : 0;
    else if (this.inOverlappableCollectiveUnaryChain(t)) local = -1;
    this.onPath.push([this.computeDom[t], local, t], t);
  }

  private inOverlappableCollectiveUnaryChain(curr: number): boolean {
    const tg = this.tg;
    for (;;) {
      if (tg.useOff[curr + 1] - tg.useOff[curr] !== 1) return false;
      const user = tg.useIdx[tg.useOff[curr]];
      if (tg.parOff[user + 1] - tg.parOff[user] !== 1) return false;
      if (this.unscheduled[user]) return true;
      if (!tg.cheap[user]) return false;
      curr = user;
    }
  }

  /** torch _get_next_nodes: off-path nodes go near their original position (batched when max_off_bucket_gb is set). */
  private nextNodes(): number[] {
    const head = this.offPath.peek();
    if (head !== undefined) {
      const node = head.node;
      const tg = this.tg;
      let go = false;
      if (this.onPath.size === 0 || this.scheduled[node]) go = true;
      else if (tg.cls[node] === NodeClass.Wait) {
        const info = this.infoAt[tg.startOf[node]]!;
        go = info.exposedMs === 0 || this.mem.current > this.allowedPeak;
      } else if (this.maxOffBucket !== null && this.infoOf.has(node)) {
        go = (this.offPathPotential.get(tg.fullKey[node]) ?? 0) >= this.maxOffBucket;
      } else if (this.rsDom[node] !== OFF_PATH) go = node <= this.lastOnPath;
      if (go) {
        this.offPath.pop();
        if (this.maxOffBucket !== null && this.infoOf.has(node)) return this.batchOffPath(node);
        return [node];
      }
    }
    return [this.onPath.pop().node];
  }

  /** Same-key off-path collectives ready now, up to max_off_bucket_gb, taken together. */
  private batchOffPath(node: number): number[] {
    const tg = this.tg;
    const key = tg.fullKey[node];
    const batch = [node];
    let total = tg.sizeBytes[node];
    const taken: number[] = [];
    this.offPath.items.forEach((e, i) => {
      const c = e.node;
      if (this.scheduled[c] || !this.infoOf.has(c) || tg.fullKey[c] !== key) return;
      if (total + tg.sizeBytes[c] > this.maxOffBucket!) return;
      batch.push(c);
      total += tg.sizeBytes[c];
      taken.push(i);
    });
    if (taken.length > 0) this.offPath.removeAt(taken);
    return batch;
  }

  // ---- handlers ----------------------------------------------------------------------------

  private schedule(t: number): void {
    const tg = this.tg;
    this.scheduled[t] = 1;
    this.walks.passedNodeGone(t);
    this.scheduledCount++;
    this.order.push(t);
    this.mem.schedule(t);
    for (let k = tg.useOff[t]; k < tg.useOff[t + 1]; k++) {
      const u = tg.useIdx[k];
      if (--this.inDegree[u] === 0) this.addToReadyQueue(u);
    }
  }

  private shouldForceWaitForMemory(): boolean {
    return this.inFlight.size > 0 && this.inFlightBytes >= this.maxInFlight;
  }

  private oldestWait(): number {
    return this.inFlight.values().next().value!.wait;
  }

  private forceOldestWait(): void {
    this.handleWait(this.oldestWait());
  }

  private handleCollectiveStart(start: number): void {
    const info = this.infoAt[start]!;
    // issued from its queue while the last prefetch scan found it too far ahead: that is its last reason
    const d = this.computeDom[start];
    const last = this.lastScan;
    if (last.overlap >= 0 && d !== OFF_PATH && this.unscheduled[start] && !this.eligible.has(info.reg)) {
      this.note(start, {
        code: 'not_prefetched_compute_distance',
        overlap: last.overlap,
        computeNodesAhead: d - last.compute,
      });
    }
    if (this.shouldAssumeBucketed(start))
      info.exposedMs = Math.max(0, info.exposedMs - this.tg.latencyUs[start] / 1000);
    this.inFlight.set(start, info);
    this.inFlightBytes += info.sizeBytes;
    this.unlink(start);
    this.schedule(start);
  }

  private unlink(start: number): void {
    if (!this.unscheduled[start]) return;
    this.unscheduled[start] = 0;
    this.eligible.delete(this.infoAt[start]!.reg);
    const p = this.prev[start];
    const q = this.next[start];
    if (p >= 0) this.next[p] = q;
    if (q >= 0) this.prev[q] = p;
  }

  /** torch should_assume_bucketed: a collective with the same bucket key is in flight. */
  private shouldAssumeBucketed(start: number): boolean {
    if (!this.opts.assume_bucketing_reduces_latency) return false;
    const key = this.tg.bucketKey[start];
    if (key === '') return false; // torch: bucket_key None
    for (const other of this.inFlight.keys()) if (this.tg.bucketKey[other] === key) return true;
    return false;
  }

  private handleWait(wait: number): void {
    const tg = this.tg;
    const start = tg.startOf[wait];
    if (!this.inFlight.has(start)) {
      this.schedule(wait);
      return;
    }
    // one NCCL stream per group: this wait also completes every earlier collective of its group
    const group = tg.group[start];
    const earlier: number[] = [];
    for (const c of this.inFlight.keys()) {
      if (c === start) break;
      if (tg.group[c] === group) earlier.push(c);
    }
    this.handling[start] = 1;
    for (const c of earlier) this.handleWait(this.infoAt[c]!.wait);
    const info = this.infoAt[start]!;
    if (info.exposedMs > 0) {
      // the compute stream idles on this collective: use the time to overlap other groups
      const pg = this.pgOf[start];
      const remaining = this.reduceExposedTimeOfInFlight(wait, info.exposedMs, pg);
      this.waiting[pg]++;
      this.scheduleCollectivesForOverlap(wait, remaining, pg);
      this.waiting[pg]--;
    }
    this.handling[start] = 0;
    this.inFlightBytes -= this.inFlight.get(start)!.sizeBytes;
    this.inFlight.delete(start);
    this.schedule(wait);
  }

  private handleComputeOrOther(t: number): void {
    const tg = this.tg;
    const est = tg.estUs[t];
    const isCompute = tg.cls[t] === NodeClass.Compute;
    if (Number.isNaN(est) || (est === 0 && !isCompute)) {
      this.schedule(t);
      return;
    }
    const available = (est / 1000) * this.opts.compute_overlap_multipler;
    const remaining = this.reduceExposedTimeOfInFlight(t, available, -1);
    this.scheduleCollectivesForOverlap(t, remaining, -1);
    this.schedule(t);
    if (isCompute) this.currentCompute++;
  }

  /**
   * Hides in-flight collectives (oldest first) behind `available` ms, per group; returns what
   * each group has left, by group number (torch's dict over all groups but `excludePg`, whose
   * slot here stays 0: sums and tests come out the same).
   */
  private reduceExposedTimeOfInFlight(node: number, available: number, excludePg: number): number[] {
    // a plain array: a small typed array per compute node costs more to allocate than it saves
    const remaining = new Array<number>(this.pgs.length).fill(available);
    if (excludePg >= 0) remaining[excludePg] = 0;
    const guard = this.opts.guard_nested_waits;
    for (const [start, info] of this.inFlight) {
      // torch 2.15: a nested wait does not hide an outer wait being handled (needs 3+ groups to happen)
      if (guard && this.handling[start]) continue;
      if (info.exposedMs === 0) continue;
      const pg = this.pgOf[start];
      if (pg === excludePg) continue;
      const left = remaining[pg];
      if (left <= 0) continue;
      const amount = Math.min(info.exposedMs, left);
      info.exposedMs -= amount;
      remaining[pg] = left - amount;
      addOnce(info.hiding, node);
    }
    return remaining;
  }

  // ---- prefetching -------------------------------------------------------------------------

  private note(c: number, refusal: PrefetchRefusal): void {
    this.infoAt[c]!.reason = refusal;
    this.blockedNote[2 * c] = -1;
    this.noteSeq[c] = ++this.noteClock;
  }

  /**
   * note() for the commonest refusal (blocked by an unscheduled node), kept in a table and made a
   * reason when the run ends: scans repeat it for the same collective at nearly every node.
   */
  private noteBlocked(c: number, overlap: number, blocker: number): void {
    this.blockedNote[2 * c] = overlap;
    this.blockedNote[2 * c + 1] = blocker;
    this.noteSeq[c] = ++this.noteClock;
  }

  /** The reasons noteBlocked() kept, each where no later note() replaced it. */
  private settleBlockedNotes(): void {
    for (const info of this.colls) {
      const overlap = this.blockedNote[2 * info.start];
      if (overlap < 0) continue;
      const blocker = this.blockedNote[2 * info.start + 1];
      info.reason = { code: 'not_prefetched_depends_on_compute', overlap, blocker };
    }
  }

  /**
   * torch _schedule_collectives_for_overlap: visits the candidates in torch's order until `remaining`
   * is spent. Most visits only note that the candidate is still blocked (a note no other visit
   * reads), and until a visit schedules something the graph stays as it was when the scan began.
   * So the candidates found blocked (with room in flight) are noted without ordering them; only the
   * others are visited in torch's order, from a heap. When one of those changes the graph or stops
   * the scan, the blocked ones before it are noted as of then (blockedAsOf), and those after it are
   * looked at again: still blocked, they wait for the next change; otherwise they join the heap.
   */
  private scheduleCollectivesForOverlap(overlap: number, remaining: number[], excludePg: number): void {
    let any = false;
    for (let g = 0; g < remaining.length; g++) if (g !== excludePg && remaining[g] > 0) any = true;
    if (!any) return;
    this.walks.enterScan(overlap);
    this.scanCandidates(this.scans.enter(), overlap, remaining, excludePg);
    this.scans.leave();
    this.walks.leaveScan(overlap);
  }

  private scanCandidates(buf: ScanBuffers, overlap: number, remaining: number[], excludePg: number): void {
    const { cands, found, blocked, order } = buf;
    const m = this.prefetchCandidates(cands, overlap, remaining, excludePg);
    let nBlocked = 0;
    let nOpen = 0;
    for (let k = 0; k < m; k++) {
      found[k] = this.noteOnly(cands[k], overlap);
      if (found[k] >= 0) blocked[nBlocked++] = k;
      else nOpen++;
    }
    if (nOpen === 0) {
      this.blockedAll(buf, nBlocked, overlap);
      return;
    }
    // the others in torch's order, lazily from a heap (the scan often stops at the first); the
    // blocked ones are noted as of their place in that order, as the graph was when torch got there
    this.candidateOrder(order, cands, m, remaining);
    for (let k = 0; k < m; k++) if (found[k] < 0) order.add(k);
    order.heapify();
    let unchanged = this.scheduledCount;
    while (order.heapSize > 0) {
      const r = order.pop();
      const asOf = this.noteClock; // the notes made before torch visits r
      const res = this.visitCandidate(cands[r], overlap, remaining);
      if (res !== STOP && this.scheduledCount === unchanged) continue;
      let nAfter = 0; // the blocked ones after r, kept in place
      for (let i = 0; i < nBlocked; i++) {
        const k = blocked[i];
        if (order.before(k, r)) this.blockedAsOf(cands[k], overlap, found[k], asOf);
        else blocked[nAfter++] = k;
      }
      if (res === STOP) return;
      // r changed the graph: the blocked ones after it are looked at again
      nBlocked = 0;
      for (let i = 0; i < nAfter; i++) {
        const k = blocked[i];
        if (remaining[this.pgOf[cands[k]]] <= 0) continue; // torch skips it: its group has no time left
        if (this.opts.guard_nested_waits && !this.unscheduled[cands[k]]) continue; // torch 2.15: started meanwhile
        found[k] = this.noteOnly(cands[k], overlap);
        if (found[k] >= 0) blocked[nBlocked++] = k;
        else order.push(k);
      }
      unchanged = this.scheduledCount;
    }
    this.blockedAll(buf, nBlocked, overlap);
  }

  /** blockedAt() for the first `n` blocked candidates of a scan, with the blockers found for them. */
  private blockedAll(buf: ScanBuffers, n: number, overlap: number): void {
    for (let i = 0; i < n; i++) this.blockedAt(buf.cands[buf.blocked[i]], overlap, buf.found[buf.blocked[i]]);
  }

  /** The blocker a visit of candidate c would only note now (it is blocked and fits in flight), or -1. */
  private noteOnly(c: number, overlap: number): number {
    const b = this.knownBlocker(c, overlap);
    return b >= 0 && this.roomFor(this.infoAt[c]!) ? b : -1;
  }

  /** blockedAt() as torch would have done it before the note clock read `asOf`: a later note stands. */
  private blockedAsOf(c: number, overlap: number, blocker: number, asOf: number): void {
    if (this.noteSeq[c] > asOf) return;
    this.blockedAt(c, overlap, blocker);
    this.noteSeq[c] = asOf;
  }

  /** An unscheduled compute node or collective it ran into earlier, still unscheduled: probePath's first answer. */
  private stillBlocked(c: number, overlap: number): boolean {
    const known = this.blockedBy[c];
    return known >= 0 && !this.scheduled[known] && known !== overlap;
  }

  /** One candidate of torch's loop; STOP when no group has time left. */
  private visitCandidate(c: number, overlap: number, remaining: number[]): number {
    // torch 2.15 skips a candidate that nested wait handling started meanwhile (<= 2.14 started it twice)
    const guard = this.opts.guard_nested_waits;
    if (guard && !this.unscheduled[c]) return GO_ON;
    const pg = this.pgOf[c];
    const avail = remaining[pg];
    if (avail <= 0) return GO_ON;
    const info = this.infoAt[c]!;
    let path = this.probePath(c, overlap);
    if (path === DEPENDS || (path === BLOCKED && !this.roomFor(info) && this.dependsOn(c, overlap))) {
      this.noteBlocked(c, overlap, overlap);
      return GO_ON;
    }
    // with room in flight nothing below changes the graph: a blocked path stays blocked
    if (path === BLOCKED && this.roomFor(info)) return GO_ON;
    if (this.prefetchWouldExceedMemoryBudget(c, overlap)) return GO_ON;
    // make room in the in-flight budget by retiring waits that are already hidden
    const before = this.scheduledCount;
    while (this.inFlight.size > 0 && !this.roomFor(info) && this.waitIsHidden(this.oldestWait(), overlap))
      this.forceOldestWait();
    if (guard && !this.unscheduled[c]) return GO_ON;
    if (!this.roomFor(info)) {
      this.note(c, {
        code: 'not_prefetched_in_flight_budget',
        overlap,
        bytes: this.inFlightBytes + info.sizeBytes,
        limitBytes: this.maxInFlight,
      });
      return GO_ON;
    }
    if (path === BLOCKED || this.scheduledCount !== before) path = this.probePath(c, overlap);
    if (path === BLOCKED || path === DEPENDS) return GO_ON;
    this.schedulePathToCollective(path);
    this.handleCollectiveStart(c);
    this.updateCumulativePrefetchMemory(c, info);
    const amount = Math.min(avail, info.exposedMs);
    info.exposedMs -= amount;
    addOnce(info.hiding, overlap);
    if (info.prefetchedBy < 0) {
      info.prefetchedBy = overlap;
      info.computeAtPrefetch = this.currentCompute;
    }
    remaining[pg] -= amount;
    let sum = 0;
    for (let g = 0; g < remaining.length; g++) sum += remaining[g];
    return sum === 0 ? STOP : GO_ON;
  }

  private roomFor(info: CollInfo): boolean {
    return this.maxInFlight - this.inFlightBytes >= info.sizeBytes;
  }

  /**
   * torch's candidates (filtered, capped at max_coll_distance) into `out` in registration order;
   * returns how many. candidateOrder() gives their order.
   */
  private prefetchCandidates(
    out: Int32Array,
    overlap: number,
    remaining: readonly number[],
    excludePg: number,
  ): number {
    // collectives within max_compute_pre_fetch of the current compute node join the eligible set
    const horizon = this.currentCompute + this.opts.max_compute_pre_fetch;
    while (this.domCursor < this.byDom.length && this.computeDom[this.byDom[this.domCursor].start] <= horizon) {
      const info = this.byDom[this.domCursor++];
      if (this.unscheduled[info.start]) this.eligible.add(info.reg);
    }
    this.lastScan.overlap = overlap;
    this.lastScan.compute = this.currentCompute;
    // torch walks every unscheduled collective in registration order, skipping those too far
    // ahead, until max_coll_distance candidates: the same list, read from the eligible set
    let m = 0;
    for (let k = this.eligible.next(0); k >= 0 && m < out.length; k = this.eligible.next(k + 1)) {
      const c = this.startOfReg[k];
      const pg = this.pgOf[c];
      if (pg === excludePg || remaining[pg] <= 0) continue;
      out[m++] = c;
    }
    return m;
  }

  /** Orders candidates[0 .. m) by what `remaining` and their exposure are now (torch sorts once, up front). */
  private candidateOrder(order: CandidateOrder, candidates: Int32Array, m: number, remaining: readonly number[]): void {
    order.reset(
      candidates,
      m,
      (c, k, key) => {
        // torch's overlap_priority: (class, domination, -min(time left, exposed), index)
        const d = this.computeDom[c];
        key[4 * k] =
          d === this.currentCompute + 1 ? 0 : d === OFF_PATH && this.rsDom[c] !== OFF_PATH ? 1 : d !== OFF_PATH ? 2 : 3;
        key[4 * k + 1] = d;
        key[4 * k + 2] = -Math.min(remaining[this.pgOf[c]], this.infoAt[c]!.exposedMs);
        key[4 * k + 3] = c;
      },
      this.opts.prioritize_bucketing_during_scheduling ? (c) => this.keyId[c] : null,
    );
  }

  /** torch _prefetch_would_exceed_memory_budget, with the reason recorded. */
  private prefetchWouldExceedMemoryBudget(c: number, overlap: number): boolean {
    const info = this.infoAt[c]!;
    const d = this.computeDom[c];
    if (d === OFF_PATH) return false;
    const size = info.sizeBytes;
    if (this.mem.current + size > this.allowedPeak) {
      this.note(c, {
        code: 'not_prefetched_memory_budget',
        overlap,
        bytes: this.mem.current + size,
        limitBytes: this.allowedPeak,
      });
      return true;
    }
    const [maxCum, maxTotal] = this.budget.query(this.currentCompute, Math.min(d, this.computeCount));
    if (maxCum + size > this.maxInFlight) {
      this.note(c, {
        code: 'not_prefetched_in_flight_budget',
        overlap,
        bytes: maxCum + size,
        limitBytes: this.maxInFlight,
      });
      return true;
    }
    if (maxTotal + size > this.allowedPeak) {
      this.note(c, {
        code: 'not_prefetched_memory_budget',
        overlap,
        bytes: maxTotal + size,
        limitBytes: this.allowedPeak,
      });
      return true;
    }
    return false;
  }

  private updateCumulativePrefetchMemory(c: number, info: CollInfo): void {
    const d = this.computeDom[c];
    if (d === OFF_PATH) return;
    this.budget.add(this.currentCompute, Math.min(d, this.computeCount), info.sizeBytes);
  }

  private waitIsHidden(wait: number, overlap: number): boolean {
    const info = this.infoAt[this.tg.startOf[wait]]!;
    return info.exposedMs === 0 && !info.hiding.includes(overlap) && !this.behindWaitInProgress(wait);
  }

  /**
   * A wait of a group whose earlier wait is being handled (handleWait is prefetching behind it): it
   * cannot be scheduled now, since completing it would complete that earlier one first and enter
   * its handleWait again. torch has no such guard; there a prefetch path through such a wait
   * recurses without end (found by the mesh fuzz test), so this changes no run that finishes.
   */
  private behindWaitInProgress(wait: number): boolean {
    return this.waiting[this.pgOf[this.tg.startOf[wait]]] > 0;
  }

  /**
   * Unscheduled ancestors of the collective (torch's path to it), DEPENDS when `overlap` is one
   * of them (torch's dependency conflict), or BLOCKED at the first compute node, unscheduled
   * collective or wait that must stay (torch collects them all, then checks; the answer does not
   * depend on the order, so the walk stops there).
   */
  private probePath(target: number, overlap: number): number[] | typeof DEPENDS | typeof BLOCKED {
    const tg = this.tg;
    const known = this.knownBlocker(target, overlap);
    if (known >= 0) {
      this.blockedAt(target, overlap, known);
      return BLOCKED;
    }
    const stamp = ++this.stamp;
    const stack: number[] = [];
    for (let k = tg.parOff[target]; k < tg.parOff[target + 1]; k++) stack.push(tg.parIdx[k]);
    const path: number[] = [];
    this.walks.forget(target);
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (this.seen[x] === stamp || this.scheduled[x]) continue;
      this.seen[x] = stamp;
      if (x === overlap) return DEPENDS;
      if (this.blocks(x, overlap)) {
        this.blockedAt(target, overlap, x);
        path.push(x);
        this.walks.record(target, path, (y) => tg.cls[y] === NodeClass.Wait);
        return BLOCKED;
      }
      path.push(x);
      for (let k = tg.parOff[x]; k < tg.parOff[x + 1]; k++) stack.push(tg.parIdx[k]);
    }
    return path;
  }

  /** probePath's refusal at `blocker`: the note, and a compute node or collective remembered (stillBlocked). */
  private blockedAt(target: number, overlap: number, blocker: number): void {
    this.noteBlocked(target, overlap, blocker);
    if (this.tg.cls[blocker] === NodeClass.Compute || this.unscheduled[blocker]) this.blockedBy[target] = blocker;
  }

  /**
   * The blocker probePath would report without walking, or -1: a remembered unscheduled compute node
   * or collective (stillBlocked), else the end of the last walk when replaying it gives the same walk.
   */
  private knownBlocker(target: number, overlap: number): number {
    return this.stillBlocked(target, overlap) ? this.blockedBy[target] : this.replayWalk(target, overlap);
  }

  /**
   * Where the last blocked walk to `target` stopped, if walking again now would stop there too, else
   * -1. The walk is a function of which nodes it pops: scheduled ones it skips (and a scheduled node
   * stays scheduled), unscheduled ones it passes or stops at. So when every node it passed is still
   * unscheduled, not `overlap` and still passable, and the last one still blocks, the stacks evolve
   * as before and the walk ends at the same node, without torch's walk over the same ancestors.
   */
  private replayWalk(target: number, overlap: number): number {
    const end = this.walks.blockerOf(target);
    if (end < 0) return -1;
    // the nodes it passed are unscheduled and not `overlap` (walk_memory.ts); of them only a wait can block now
    for (const w of this.walks.waitsOf(target)) if (this.blocks(w, overlap)) return -1;
    return this.scheduled[end] || end === overlap || !this.blocks(end, overlap) ? -1 : end;
  }

  /** Is `overlap` an ancestor of the collective `target`? (static reachability, built on first use) */
  private dependsOn(target: number, overlap: number): boolean {
    return REACH(this.tg).isAncestorOfTarget(overlap, target);
  }

  /**
   * An unscheduled node a prefetch may not pull forward: compute, a collective, a wait not yet hidden or hidden by
   * `overlap`.
   */
  private blocks(x: number, overlap: number): boolean {
    const cls = this.tg.cls[x];
    if (cls === NodeClass.Compute || this.unscheduled[x]) return true;
    if (cls !== NodeClass.Wait) return this.c10Op[x] === 1; // torch: 'Skipping c10/dtensor op … in path'
    const info = this.infoAt[this.tg.startOf[x]]!;
    return !(info.exposedMs === 0 && !info.hiding.includes(overlap)) || this.behindWaitInProgress(x);
  }

  private schedulePathToCollective(path: number[]): void {
    for (const x of sortAscending([...path])) {
      if (this.tg.cls[x] === NodeClass.Wait) {
        // an earlier wait of the group may already have forced this one
        if (!this.scheduled[x]) this.handleWait(x);
        continue;
      }
      this.schedule(x);
    }
  }
}

/** Static reachability to the collectives, per region (keyed by its edge table). */
const REACH = weakMemo(
  (tg: TorchGraph) => tg.parOff,
  (tg: TorchGraph) => {
    const order = Int32Array.from({ length: tg.n }, (_, i) => i);
    return new TargetReach({ n: tg.n, order, parOff: tg.parOff, parIdx: tg.parIdx }, Array.from(tg.collectives));
  },
);

const DEPENDS = 'depends' as const;
const GO_ON = 0;
const STOP = 1;
const BLOCKED = 'blocked' as const;

function addOnce(list: number[], x: number): void {
  if (!list.includes(x)) list.push(x);
}

/** torch _calculate_domination_index: the smallest target index each node (transitively) feeds. */
function domination(tg: TorchGraph, isTarget: (t: number) => boolean): Float64Array {
  const index = new Float64Array(tg.n).fill(-1);
  let k = 0;
  for (let t = 0; t < tg.n; t++) if (isTarget(t)) index[t] = k++;
  const dom = new Float64Array(tg.n);
  for (let t = tg.n - 1; t >= 0; t--) {
    if (index[t] >= 0) {
      dom[t] = index[t];
      continue;
    }
    let d = OFF_PATH;
    for (let j = tg.useOff[t]; j < tg.useOff[t + 1]; j++) if (dom[tg.useIdx[j]] < d) d = dom[tg.useIdx[j]];
    dom[t] = d;
  }
  return dom;
}
