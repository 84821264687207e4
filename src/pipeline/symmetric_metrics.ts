// Metrics of a simulation without re-measuring identical ranks. When ranks are symmetric every
// emitted rank's events are copies of one rank's, so its RankMetrics stand for all of them: this
// computes them once (computeMetrics on that rank) and aggregates the copies exactly as
// computeMetrics (src/trace/metrics.ts) does over the full trace — the same numbers, bit for bit
// (the means add the same value in the same order), at 1/N of the cost.

import type { SimResult } from '../sim';
import type { TraceEvent } from '../trace';
import { aggregateMetrics, computeMetrics, type RankMetrics, type TraceMetrics } from '../trace';

/** computeMetrics(events, memory) when `ranks` all carry copies of `one` (the metrics of one of them). */
function replicateMetrics(one: RankMetrics, ranks: readonly number[]): TraceMetrics {
  const perRank: RankMetrics[] = ranks.map((rank) => (rank === one.rank ? one : { ...one, rank }));
  return aggregateMetrics(perRank); // computeMetrics' own aggregation, over identical ranks
}

/** Events of the first rank of a trace sorted by rank (a prefix). */
function firstRankEvents(events: readonly TraceEvent[]): readonly TraceEvent[] {
  if (events.length === 0) return events;
  const r = events[0].rank;
  let k = 0;
  while (k < events.length && events[k].rank === r) k++;
  return events.slice(0, k);
}

/**
 * computeMetrics(sim.events, sim.memory), computing one rank when the simulation was symmetric
 * (its events are sorted by rank, every emitted rank a copy of the first). `ranks`: the ranks the
 * metrics cover (default: those emitted), so a caller that emitted fewer ranks than it measures
 * gets the metrics of the full set.
 */
export function simMetrics(sim: SimResult, ranks?: readonly number[]): TraceMetrics {
  if (!sim.symmetric || sim.events.length === 0) return computeMetrics(sim.events, sim.memory);
  const first = firstRankEvents(sim.events);
  const rank = first[0].rank;
  const curve = sim.memory.find((m) => m.rank === rank);
  const one = computeMetrics(first, curve ? [curve] : []).perRank[0];
  // symmetric: the memory curves are copied to exactly the ranks the events were (sorted)
  const covered =
    ranks ??
    (sim.memory.length > 0
      ? sim.memory.map((m) => m.rank)
      : [...new Set(sim.events.map((e) => e.rank))].sort((a, b) => a - b));
  return replicateMetrics(one, covered);
}
