// Fallback order of aot_eager_autobucketing when no overlap-scheduler order fits the memory
// budget (typically activation checkpointing, where the domination-order reordering of recompute
// chains and off-path nodes extends tensor lifetimes): program order with hoisted collective
// starts. Matmul-like compute keeps its program order (only the cheap nodes feeding a hoisted
// collective, e.g. casts or norm backward, move up with it); at each compute node the
// in-flight collectives are hidden first (oldest first, as torch's OverlapScheduler does), then
// upcoming collectives whose only unscheduled ancestors are cheap non-compute nodes are started
// early, within max_compute_pre_fetch / max_coll_distance, the in-flight budget and the memory
// budget (program-order live bytes plus what earlier hoists added over each position) — but only
// just in time: a collective the compute after this node still hides waits for a later node, so
// prefetched buffers do not eat the memory headroom. Waits of still-exposed collectives (the
// reduce-scatters) are deferred until a user needs them, compute hid them, or memory / in-flight
// budgets force them; other waits keep their program position.
// Upstream (prefetch rules): https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { CostModel } from '../../estimate/types';
import type { GraphIndex } from '../graph_index';
import { orderMemory, type MemoryTables } from '../memory_tracker';
import type { ReasonCode } from '../types';
import { baselineMemory, identifyCollectives } from './collectives';
import { gbToBytes, type AutobucketingOptions } from './options';

export interface HoistResult {
  readonly order: Int32Array; // graph-index node numbers in execution order
  /** Per collective (start order): the compute node it was hoisted before, or -1 (issued in place). */
  readonly hoistedBefore: Int32Array;
  /** Per collective: the last reason a compute node did not hoist it (undefined: never needed). */
  readonly notHoisted: readonly (ReasonCode | undefined)[];
  /** Per collective: estimated µs no compute hid. */
  readonly exposedUs: Float64Array;
  readonly starts: Int32Array; // per collective: its start node
  readonly peakBytes: number;
}

/**
 * Program order with collective starts moved earlier; the estimated peak stays ≤ `budgetBytes`
 * (checked position by position; the caller verifies the exact peak of the result).
 */
export function hoistCollectives(
  ix: GraphIndex,
  cost: CostModel,
  opts: AutobucketingOptions,
  tables: MemoryTables,
  budgetBytes: number,
): HoistResult {
  const n = ix.n;
  const { colls, collOf, waitColl } = identifyCollectives(ix, cost);
  const C = colls.length;
  const allocBytes = baselineMemory(ix, tables).allocBytes;
  const identity = Int32Array.from({ length: n }, (_, i) => i);
  const live = orderMemory(tables, identity).live; // live bytes while each program position runs
  const extra = new Float64Array(n); // bytes hoists added over each program position
  const computeBefore = new Int32Array(n + 1); // compute nodes before each program position
  for (let i = 0; i < n; i++) computeBefore[i + 1] = computeBefore[i] + ix.isCompute[i];
  // credit (µs of hiding compute) before each program position
  const creditUs = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) creditUs[i + 1] = creditUs[i] + (ix.isCompute[i] ? computeCreditUs(cost, ix, i, opts) : 0);
  const maxInFlight = gbToBytes(opts.max_in_flight_gb);
  const scheduled = new Uint8Array(n);
  const hoistedBefore = new Int32Array(C).fill(-1);
  const why: (ReasonCode | undefined)[] = new Array(C).fill(undefined); // last reason it was not hoisted
  const exposed = Float64Array.from(colls, (c) => c.exposedUs);
  const inFlight: number[] = []; // collective numbers, issue order
  let inFlightBytes = 0;
  const order: number[] = [];
  const mark = new Int32Array(n);
  let stamp = 0;
  let head = 0; // first collective not yet issued (start order)

  const schedule = (node: number) => {
    scheduled[node] = 1;
    order.push(node);
    const c = collOf[node];
    if (c >= 0) {
      inFlight.push(c);
      inFlightBytes += colls[c].sizeBytes;
    }
    const w = waitColl[node];
    if (w >= 0) {
      const k = inFlight.indexOf(w);
      if (k >= 0) inFlight.splice(k, 1);
      inFlightBytes -= colls[w].sizeBytes;
    }
  };

  /** Unscheduled ancestors of `start`, or null when one is compute, a collective or a wait. */
  const pathOf = (start: number): number[] | null => {
    const s = ++stamp;
    const stack = [start];
    const path: number[] = [];
    while (stack.length > 0) {
      const x = stack.pop()!;
      for (let k = ix.predOff[x]; k < ix.predOff[x + 1]; k++) {
        const p = ix.predIdx[k];
        if (scheduled[p] || mark[p] === s) continue;
        mark[p] = s;
        if (ix.isCompute[p] || collOf[p] >= 0 || waitColl[p] >= 0) return null;
        path.push(p);
        stack.push(p);
      }
    }
    return path;
  };

  const prefetch = (at: number, available: number) => {
    // hide what is already in flight, oldest first
    for (const c of inFlight) {
      if (available <= 0) break;
      const amount = Math.min(available, exposed[c]);
      exposed[c] -= amount;
      available -= amount;
    }
    while (head < C && scheduled[colls[head].start]) head++;
    let seen = 0;
    let pendingUs = 0; // exposure still queued on the comm streams ahead of the next candidate
    for (let c = head; c < C && available > 0; c++) {
      const info = colls[c];
      if (scheduled[info.start]) continue;
      if (++seen > opts.max_coll_distance) {
        why[c] = 'not_prefetched_coll_distance';
        break;
      }
      if (computeBefore[info.start] - computeBefore[at] > opts.max_compute_pre_fetch) {
        why[c] = 'not_prefetched_compute_distance';
        break;
      }
      // just in time: leave it for a later compute node when the compute after this one still hides it
      if (creditUs[info.start] - creditUs[at + 1] >= pendingUs + exposed[c]) break;
      if (inFlightBytes + info.sizeBytes > maxInFlight) {
        why[c] = 'not_prefetched_in_flight_budget';
        break;
      }
      const path = pathOf(info.start);
      if (path === null) {
        why[c] = 'not_prefetched_depends_on_compute';
        continue;
      }
      let bytes = allocBytes[info.start];
      for (const p of path) bytes += allocBytes[p];
      let high = 0;
      for (let k = at; k < info.start; k++) high = Math.max(high, live[k] + extra[k]);
      if (high + bytes > budgetBytes) {
        why[c] = 'not_prefetched_memory_budget';
        continue;
      }
      for (let k = at; k < info.start; k++) extra[k] += bytes;
      path.sort((a, b) => a - b);
      for (const p of path) schedule(p);
      schedule(info.start);
      hoistedBefore[c] = at;
      const amount = Math.min(available, exposed[c]);
      exposed[c] -= amount;
      available -= amount;
      pendingUs += exposed[c];
    }
  };

  // waits of still-exposed collectives are deferred (torch schedules such waits late, off the
  // critical path) until a user needs them, compute has hidden them, or the budgets say so
  const deferred: number[] = []; // wait nodes, program order
  // what a deferred wait keeps alive: its collective's input (the output lives until its users anyway)
  const heldBytes = Float64Array.from(colls, (c) => ix.nodes[c.start].collective?.inputBytes ?? c.sizeBytes);
  let deferredBytes = 0;
  const flush = (k: number) => {
    const w = deferred.splice(k, 1)[0];
    deferredBytes -= heldBytes[waitColl[w]];
    schedule(w);
  };
  for (let i = 0; i < n; i++) {
    if (scheduled[i]) continue;
    if (deferred.length > 0) {
      for (let k = ix.predOff[i]; k < ix.predOff[i + 1]; k++) {
        const d = deferred.indexOf(ix.predIdx[k]);
        if (d >= 0) flush(d);
      }
      while (deferred.length > 0 && (live[i] + extra[i] + deferredBytes > budgetBytes || inFlightBytes > maxInFlight)) flush(0);
      extra[i] += deferredBytes;
    }
    if (waitColl[i] >= 0 && exposed[waitColl[i]] > 0 && ix.succOff[i + 1] > ix.succOff[i] && live[i] + extra[i] + heldBytes[waitColl[i]] <= budgetBytes) {
      deferred.push(i);
      deferredBytes += heldBytes[waitColl[i]];
      continue;
    }
    if (ix.isCompute[i]) {
      const available = creditUs[i + 1] - creditUs[i];
      if (available > 0) prefetch(i, available);
    }
    schedule(i);
    for (let d = 0; d < deferred.length; ) {
      if (exposed[waitColl[deferred[d]]] === 0) flush(d);
      else d++;
    }
  }
  while (deferred.length > 0) flush(0);
  const out = Int32Array.from(order);
  return {
    order: out,
    hoistedBefore,
    notHoisted: why,
    exposedUs: exposed,
    starts: Int32Array.from(colls, (c) => c.start),
    peakBytes: orderMemory(tables, out).peak,
  };
}

/** µs of communication a compute node hides (its estimate × compute_overlap_multipler). */
function computeCreditUs(cost: CostModel, ix: GraphIndex, i: number, opts: AutobucketingOptions): number {
  const t = cost.computeUs(ix.nodes[i]);
  return (Number.isFinite(t) && t > 0 ? t : 0) * opts.compute_overlap_multipler;
}
