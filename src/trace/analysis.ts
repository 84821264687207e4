// What `fsdp-sim analyze` and the app report for an imported trace: Holistic Trace Analysis'
// per-rank figures (get_comm_comp_overlap, get_temporal_breakdown) over its analysed window, the
// same per ProfilerStep iteration, and the app's overall metrics (step, exposed, idle, peak,
// collective counts). NaN (no communication, an empty rank) stays NaN: JSON writes it as null.

import type { MemoryCurve, TraceEvent } from './event';
import { computeMetrics, rankMetrics, type CollectiveCounts, type RankMetrics, type TraceMetrics } from './metrics';

/** HTA's figures for one rank (or one rank in one iteration). */
interface HtaRow {
  readonly rank: number;
  readonly overlapPct: number; // NaN: no communication
  readonly idlePct: number;
  readonly computePct: number;
  readonly nonComputePct: number;
  readonly spanUs: number; // HTA's kernel_time: first GPU event start → last GPU event end
}

interface RankRow extends HtaRow {
  readonly computeUs: number;
  readonly commUs: number;
  readonly exposedCommUs: number;
  readonly idleUs: number;
  readonly nonComputeUs: number;
  readonly memoryUs: number;
  readonly syncUs: number;
  readonly peakMemoryBytes: number;
  readonly collectives: CollectiveCounts;
}

interface IterationRow extends HtaRow {
  readonly iteration: number; // ProfilerStep#N
}

export interface TraceAnalysis {
  readonly ranks: readonly RankRow[];
  readonly iterations: readonly IterationRow[];
  readonly overall: {
    readonly stepTimeUs: number;
    readonly exposedCommUs: number;
    readonly overlapPct: number;
    readonly idleUs: number;
    readonly peakMemoryBytes: number;
    readonly collectives: CollectiveCounts;
  };
}

const htaRow = (m: RankMetrics): HtaRow => ({
  rank: m.rank,
  overlapPct: m.overlapPct,
  idlePct: m.idlePct,
  computePct: m.computePct,
  nonComputePct: m.nonComputePct,
  spanUs: m.stepUs,
});

function rankRow(m: RankMetrics): RankRow {
  return {
    ...htaRow(m),
    computeUs: m.computeUs,
    commUs: m.commUs,
    exposedCommUs: m.exposedCommUs,
    idleUs: m.idleUs,
    nonComputeUs: m.nonComputeUs,
    memoryUs: m.categoryUs.memory,
    syncUs: m.categoryUs.sync,
    peakMemoryBytes: m.peakMemoryBytes,
    collectives: m.collectives,
  };
}

/** Per-iteration rows: events grouped by (ProfilerStep, rank); events without a step are left out. */
function iterationRows(events: readonly TraceEvent[]): IterationRow[] {
  const groups = new Map<string, { iteration: number; rank: number; events: TraceEvent[] }>();
  for (const e of events) {
    if (e.iteration === undefined) continue;
    const key = `${e.iteration}/${e.rank}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { iteration: e.iteration, rank: e.rank, events: [] }));
    g.events.push(e);
  }
  return [...groups.values()]
    .sort((a, b) => a.iteration - b.iteration || a.rank - b.rank)
    .map((g) => ({ iteration: g.iteration, ...htaRow(rankMetrics(g.rank, g.events)) }));
}

/** The analysis of a trace's events (and memory curves, for the peak). */
export function analyzeTrace(events: readonly TraceEvent[], memory: readonly MemoryCurve[] = []): TraceAnalysis {
  const m: TraceMetrics = computeMetrics(events, memory);
  return {
    ranks: m.perRank.map(rankRow),
    iterations: iterationRows(events),
    overall: {
      stepTimeUs: m.stepTimeUs,
      exposedCommUs: m.exposedCommUs,
      overlapPct: m.overlapPct,
      idleUs: m.idleUs,
      peakMemoryBytes: m.peakMemoryBytes,
      collectives: m.collectives,
    },
  };
}
