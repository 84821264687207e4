// Trace metrics with Holistic Trace Analysis' definitions (HTA temporal/comm-comp overlap
// breakdown, hta/analyzers/breakdown_analysis.py), per rank and overall. U = union of intervals:
//   compute  = |U_comp|                       (compute kernels; waits are NOT compute)
//   comm     = |U_comm|                       (all_gather / reduce_scatter kernels)
//   exposed  = |U_comm| − |U_comm ∩ U_comp|
//   overlap% = |U_comp ∩ U_comm| / |U_comm| · 100
//   idle     = span − |U_comp ∪ U_comm|       (span: first kernel start → last kernel end)
// Waits are the compute stream blocked on a collective; they are neither kernels nor idle-filling.

import type { EventKind, MemoryCurve, TraceEvent } from './event';
import { intersect, totalLength, union, type Interval } from './intervals';

export interface CollectiveCounts {
  readonly all_gather: number;
  readonly reduce_scatter: number;
}

export interface RankMetrics {
  readonly rank: number;
  readonly startUs: number; // first kernel start
  readonly endUs: number; // last kernel end
  readonly stepUs: number; // endUs − startUs
  readonly computeUs: number;
  readonly commUs: number;
  readonly overlapUs: number; // |U_comp ∩ U_comm|
  readonly exposedCommUs: number;
  readonly overlapPct: number; // 0 when the rank has no communication
  readonly idleUs: number;
  readonly peakMemoryBytes: number; // 0 when no memory curve was given for the rank
  readonly collectives: CollectiveCounts; // collective kernels launched (a bucket counts once)
}

export interface TraceMetrics {
  readonly perRank: readonly RankMetrics[];
  /** Overall step time: last kernel end over all ranks − first kernel start over all ranks. */
  readonly stepTimeUs: number;
  /** Mean over ranks (every rank runs the same program; the mean is what a step costs a rank). */
  readonly computeUs: number;
  readonly commUs: number;
  readonly exposedCommUs: number;
  readonly idleUs: number;
  /** Σ overlap / Σ comm over ranks, in %. */
  readonly overlapPct: number;
  /** Max over ranks. */
  readonly peakMemoryBytes: number;
  /** Max over ranks of collectives launched per rank. */
  readonly collectives: CollectiveCounts;
}

const COMM_KINDS: ReadonlySet<EventKind> = new Set(['all_gather', 'reduce_scatter']);

export const isCommEvent = (e: TraceEvent): boolean => COMM_KINDS.has(e.kind);

/** Metrics of one rank's events (events of other ranks are ignored). */
export function rankMetrics(rank: number, events: readonly TraceEvent[], memory?: MemoryCurve): RankMetrics {
  const comp: Interval[] = [];
  const comm: Interval[] = [];
  let ag = 0;
  let rs = 0;
  for (const e of events) {
    if (e.rank !== rank) continue;
    const iv: Interval = [e.start, e.start + e.dur];
    if (e.kind === 'compute') comp.push(iv);
    else if (e.kind === 'all_gather') (comm.push(iv), ag++);
    else if (e.kind === 'reduce_scatter') (comm.push(iv), rs++);
  }
  const uComp = union(comp);
  const uComm = union(comm);
  const uAll = union([...uComp, ...uComm]);
  const computeUs = totalLength(uComp);
  const commUs = totalLength(uComm);
  const overlapUs = totalLength(intersect(uComp, uComm));
  const startUs = uAll.length ? uAll[0][0] : 0;
  const endUs = uAll.length ? uAll[uAll.length - 1][1] : 0;
  const stepUs = endUs - startUs;
  return {
    rank,
    startUs,
    endUs,
    stepUs,
    computeUs,
    commUs,
    overlapUs,
    exposedCommUs: commUs - overlapUs,
    overlapPct: commUs > 0 ? (overlapUs / commUs) * 100 : 0,
    idleUs: stepUs - totalLength(uAll),
    peakMemoryBytes: memory?.peakBytes ?? 0,
    collectives: { all_gather: ag, reduce_scatter: rs },
  };
}

/** Per-rank and overall metrics of a trace; ranks are those that appear in events or memory. */
export function computeMetrics(events: readonly TraceEvent[], memory: readonly MemoryCurve[] = []): TraceMetrics {
  const ranks = [...new Set([...events.map((e) => e.rank), ...memory.map((m) => m.rank)])].sort((a, b) => a - b);
  const memByRank = new Map(memory.map((m) => [m.rank, m] as const));
  const byRank = new Map<number, TraceEvent[]>(ranks.map((r) => [r, []]));
  for (const e of events) byRank.get(e.rank)!.push(e); // one pass: O(events), not O(ranks · events)
  const perRank = ranks.map((r) => rankMetrics(r, byRank.get(r)!, memByRank.get(r)));
  return aggregateMetrics(perRank);
}

/**
 * Overall metrics from per-rank ones: step = the span across ranks; compute, comm, exposed and
 * idle = means over ranks that ran kernels; overlap % = total overlap / total comm; peak memory
 * and collective counts = maxima over ranks.
 */
export function aggregateMetrics(perRank: readonly RankMetrics[]): TraceMetrics {
  const withKernels = perRank.filter((m) => m.stepUs > 0 || m.commUs > 0 || m.computeUs > 0);
  const n = Math.max(1, withKernels.length);
  const mean = (f: (m: RankMetrics) => number) => withKernels.reduce((s, m) => s + f(m), 0) / n;
  const sumComm = withKernels.reduce((s, m) => s + m.commUs, 0);
  const sumOverlap = withKernels.reduce((s, m) => s + m.overlapUs, 0);
  let startUs = Infinity;
  let endUs = -Infinity;
  for (const m of withKernels) {
    startUs = Math.min(startUs, m.startUs);
    endUs = Math.max(endUs, m.endUs);
  }
  return {
    perRank,
    stepTimeUs: withKernels.length ? endUs - startUs : 0,
    computeUs: mean((m) => m.computeUs),
    commUs: mean((m) => m.commUs),
    exposedCommUs: mean((m) => m.exposedCommUs),
    idleUs: mean((m) => m.idleUs),
    overlapPct: sumComm > 0 ? (sumOverlap / sumComm) * 100 : 0,
    peakMemoryBytes: perRank.reduce((s, m) => Math.max(s, m.peakMemoryBytes), 0),
    collectives: {
      all_gather: perRank.reduce((s, m) => Math.max(s, m.collectives.all_gather), 0),
      reduce_scatter: perRank.reduce((s, m) => Math.max(s, m.collectives.reduce_scatter), 0),
    },
  };
}
