// Trace metrics with Holistic Trace Analysis' definitions (hta/analyzers/breakdown_analysis.py
// get_temporal_breakdown, communication_analysis.py get_comm_comp_overlap), per rank and overall.
// U = union of intervals, counted once however many kernels cover it:
//   compute     = |U_comp|                     (computation kernels; waits are NOT compute)
//   comm        = |U_comm|                     (kernels of every collective: AG, RS, AR, P2P, ...)
//   busy        = |U_gpu|                      (every GPU event but waits: + memcpy/memset/sync)
//   span        = last GPU event end − first GPU event start      (HTA's kernel_time)
//   idle        = span − busy
//   non-compute = span − compute − idle = busy − compute
//   exposed     = |U_comm| − |U_comm ∩ U_comp|
//   overlap%    = |U_comp ∩ U_comm| / |U_comm| · 100, NaN when the rank has no communication (HTA: 0/0)
// Waits are the compute stream blocked on a collective (simulated traces); they count nowhere.
// What a wait is made of, for the timeline: the part under exposed communication (U_comm − U_comp,
// the set `exposed` measures) and the rest, where no collective of the rank runs yet: waiting
// for a late peer, which the metrics count as idle (waitSplit).

import type { MemoryCurve, TraceEvent } from './event';
import { intersect, subtract, totalLength, union, type Interval } from './intervals';
import { COMM_KINDS, isCommKind, type CommKind } from './kinds';

/** Collective kernels launched, per kind (a bucket counts once). */
export type CollectiveCounts = Readonly<Record<CommKind, number>>;

/** Union time of each of HTA's GPU-event categories (HTA's kernel breakdown by type), µs. */
interface CategoryUs {
  readonly compute: number;
  readonly communication: number;
  readonly memory: number;
  readonly sync: number;
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
  readonly overlapPct: number; // NaN when the rank has no communication
  readonly idleUs: number;
  readonly nonComputeUs: number; // busy − compute: communication, memory and sync not under compute
  readonly idlePct: number; // of stepUs (NaN for an empty rank); HTA's temporal breakdown
  readonly computePct: number;
  readonly nonComputePct: number;
  readonly categoryUs: CategoryUs;
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
  readonly nonComputeUs: number;
  /** Σ overlap / Σ comm over ranks, in %; NaN when no rank communicates. */
  readonly overlapPct: number;
  /** Max over ranks. */
  readonly peakMemoryBytes: number;
  /** Max over ranks of collectives launched per rank. */
  readonly collectives: CollectiveCounts;
}

const zeroCounts = (): Record<CommKind, number> =>
  Object.fromEntries(COMM_KINDS.map((k) => [k, 0])) as Record<CommKind, number>;

const pct = (x: number, of: number): number => (of > 0 ? (x / of) * 100 : NaN);

/** One rank's time sets as the metrics count them: unions of compute, communication and waits. */
interface RankTimeSets {
  readonly comp: readonly Interval[];
  readonly comm: readonly Interval[];
  readonly waits: readonly Interval[];
  /** Memory and sync intervals (not a union). */
  readonly other: { readonly mem: readonly Interval[]; readonly sync: readonly Interval[] };
  readonly counts: CollectiveCounts;
}

/** The time sets of one rank's events (events of other ranks are ignored). */
export function rankTimeSets(rank: number, events: readonly TraceEvent[]): RankTimeSets {
  const comp: Interval[] = [];
  const comm: Interval[] = [];
  const waits: Interval[] = [];
  const mem: Interval[] = [];
  const sync: Interval[] = [];
  const counts = zeroCounts();
  for (const e of events) {
    if (e.rank !== rank) continue;
    const iv: Interval = [e.start, e.start + e.dur];
    if (e.kind === 'compute') comp.push(iv);
    else if (isCommKind(e.kind)) {
      comm.push(iv);
      counts[e.kind]++;
    } else if (e.kind === 'wait') waits.push(iv);
    else if (e.kind === 'memory' || e.kind === 'readback' || e.kind === 'upload') {
      mem.push(iv); // host copies count as HTA's memory time
    } else if (e.kind === 'sync' || e.kind === 'barrier') sync.push(iv);
  }
  return { comp: union(comp), comm: union(comm), waits: union(waits), other: { mem, sync }, counts };
}

/** Exposed communication as intervals: U_comm − U_comp; its length is RankMetrics.exposedCommUs. */
export function exposedIntervals(t: RankTimeSets): Interval[] {
  return subtract(t.comm, t.comp);
}

/**
 * A rank's waits split by the metrics' own sets: `exposed` = waits ∩ (U_comm − U_comp), counted as
 * exposed communication; `peer` = the rest of the waits, where no collective of the rank runs yet
 * (a late peer), which the metrics count as idle.
 */
export function waitSplit(t: RankTimeSets): { exposed: Interval[]; peer: Interval[] } {
  const exposed = exposedIntervals(t);
  return { exposed: intersect(t.waits, exposed), peer: subtract(t.waits, exposed) };
}

/** Metrics of one rank's events (events of other ranks are ignored). */
export function rankMetrics(rank: number, events: readonly TraceEvent[], memory?: MemoryCurve): RankMetrics {
  const t = rankTimeSets(rank, events);
  const { comp: uComp, comm: uComm, counts } = t;
  const { mem, sync } = t.other;
  const uAll = union([...uComp, ...uComm, ...mem, ...sync]);
  const computeUs = totalLength(uComp);
  const commUs = totalLength(uComm);
  const busyUs = totalLength(uAll);
  const overlapUs = totalLength(intersect(uComp, uComm));
  const startUs = uAll.length ? uAll[0][0] : 0;
  const endUs = uAll.length ? uAll[uAll.length - 1][1] : 0;
  const stepUs = endUs - startUs;
  const idleUs = stepUs - busyUs;
  const nonComputeUs = busyUs - computeUs;
  return {
    rank,
    startUs,
    endUs,
    stepUs,
    computeUs,
    commUs,
    overlapUs,
    exposedCommUs: commUs - overlapUs,
    overlapPct: pct(overlapUs, commUs),
    idleUs,
    nonComputeUs,
    idlePct: pct(idleUs, stepUs),
    computePct: pct(computeUs, stepUs),
    nonComputePct: pct(nonComputeUs, stepUs),
    categoryUs: {
      compute: computeUs,
      communication: commUs,
      memory: totalLength(union(mem)),
      sync: totalLength(union(sync)),
    },
    peakMemoryBytes: memory?.peakBytes ?? 0,
    collectives: counts,
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
    nonComputeUs: mean((m) => m.nonComputeUs),
    overlapPct: pct(sumOverlap, sumComm),
    peakMemoryBytes: perRank.reduce((s, m) => Math.max(s, m.peakMemoryBytes), 0),
    collectives: Object.fromEntries(
      COMM_KINDS.map((k) => [k, perRank.reduce((s, m) => Math.max(s, m.collectives[k]), 0)]),
    ) as CollectiveCounts,
  };
}
