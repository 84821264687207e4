// Collectives the overlap scheduler tracks (torch OverlapScheduler._identify_collectives) and the
// original order's memory baseline (torch _compute_baseline_memory): live bytes between compute
// nodes, the reference the prefetch memory budget is checked against.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { CostModel } from '../../estimate/types';
import type { GraphIndex } from '../graph_index';
import { IncrementalMemory, type MemoryTables } from '../memory_tracker';
import { collectiveBytes } from '../rewrite';
import type { ReasonCode } from '../types';

/** Scheduling state of one original collective (torch's CollectiveInfo). */
export interface CollState {
  readonly start: number; // graph-index node number of the collective
  readonly wait: number;
  readonly group: number;
  readonly sizeBytes: number; // input + output bytes (estimate_fx_collective_memory_footprint)
  readonly estUs: number;
  /** Latency part of the estimate (the same collective with 0 bytes): what bucketing saves. */
  readonly latencyUs: number;
  /** torch bucket_key in custom_ops_multidtype mode (kind, group, reduce op; any dtype), numbered. */
  readonly looseKey: number;
  exposedUs: number;
  readonly hiding: number[]; // nodes whose time hid part of it, in order
  prefetchedBy: number; // overlap node that pulled it forward, -1 when issued from the queue
  computeAtPrefetch: number;
  /** Last reason it was not prefetched: code plus the overlap node and two numbers the text needs. */
  reason?: { code: ReasonCode; overlap: number; a: number; b: number };
}

export interface Collectives {
  readonly colls: CollState[]; // in start order
  readonly collOf: Int32Array; // start node → collective number, -1
  readonly waitColl: Int32Array; // wait node → collective number, -1
  readonly groups: readonly string[]; // process groups in order of first use
}

/** One CollState per collective (with its wait), estimated by the cost model or the graph's estMs. */
export function identifyCollectives(ix: GraphIndex, cost: CostModel): Collectives {
  const n = ix.n;
  const colls: CollState[] = [];
  const collOf = new Int32Array(n).fill(-1);
  const waitColl = new Int32Array(n).fill(-1);
  const groups: string[] = [];
  const groupIds = new Map<string, number>();
  const looseKeys = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const w = ix.waitOfColl[i];
    if (w < 0) continue;
    const node = ix.nodes[i];
    const c = node.collective!;
    let g = groupIds.get(c.group);
    if (g === undefined) groupIds.set(c.group, (g = groups.push(c.group) - 1));
    const est = node.estMs !== undefined ? node.estMs * 1000 : cost.collectiveUs(c.kind, collectiveBytes(node), c.groupSize, c.dtype);
    const estUs = Number.isFinite(est) && est > 0 ? est : 0;
    const lat = cost.collectiveUs(c.kind, 0, c.groupSize, c.dtype);
    const latencyUs = Number.isFinite(lat) && lat > 0 ? Math.min(lat, estUs) : 0;
    const lk = `${c.kind}|${c.group}|${c.reduceOp ?? ''}`;
    let looseKey = looseKeys.get(lk);
    if (looseKey === undefined) looseKeys.set(lk, (looseKey = looseKeys.size));
    collOf[i] = colls.length;
    waitColl[w] = colls.length;
    colls.push({
      start: i, wait: w, group: g, sizeBytes: c.inputBytes + c.outputBytes, estUs, latencyUs, looseKey, exposedUs: estUs,
      hiding: [], prefetchedBy: -1, computeAtPrefetch: -1,
    });
  }
  return { colls, collOf, waitColl, groups };
}

export interface BaselineMemory {
  readonly peakBytes: number;
  /** Per compute index: max live bytes since the previous compute node, in the original order. */
  readonly beforeCompute: Float64Array;
  /** Bytes each node allocates (what scheduling it early costs). */
  readonly allocBytes: Float64Array;
}

const CACHE = new WeakMap<MemoryTables, BaselineMemory>();

/** Baseline of the original (graph-index) order; cached, it depends on the graph only. */
export function baselineMemory(ix: GraphIndex, tables: MemoryTables): BaselineMemory {
  const hit = CACHE.get(tables);
  if (hit !== undefined) return hit;
  const n = ix.n;
  const allocBytes = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let k = tables.allocOff[i]; k < tables.allocOff[i + 1]; k++) allocBytes[i] += tables.baseBytes[tables.allocIdx[k]];
  }
  const before: number[] = [];
  const tracker = new IncrementalMemory(tables);
  let sinceLast = 0;
  for (let i = 0; i < n; i++) {
    const during = tracker.schedule(i);
    sinceLast = Math.max(sinceLast, during);
    if (ix.isCompute[i]) {
      before.push(sinceLast);
      sinceLast = tracker.current;
    }
  }
  const out = { peakBytes: tracker.peak, beforeCompute: Float64Array.from(before), allocBytes };
  CACHE.set(tables, out);
  return out;
}
