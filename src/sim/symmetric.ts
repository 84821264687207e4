// Symmetric ranks: when every rank runs the same schedule with the same cost model, all ranks
// issue every collective at the same instant and the step is identical on each, so one rank is
// simulated and its events / memory are copied to the ranks asked for (1024 ranks cost 1×).

import type { Schedule } from '../backends';
import type { CostModel } from '../estimate';
import type { MemoryCurve, TraceEvent } from '../trace';

/** Ranks emit by default: all below this world size, else rank 0 only. */
export const EMIT_ALL_BELOW = 64;

export function isSymmetric(
  schedules: Schedule | readonly Schedule[],
  cost: CostModel | readonly CostModel[],
): boolean {
  const same = <T>(x: T | readonly T[]) => {
    if (!Array.isArray(x)) return true;
    const xs = x as readonly T[];
    return xs.every((v) => v === xs[0]);
  };
  return same(schedules) && same(cost);
}

/** `events` (one rank's) repeated for each of `ranks`; `copy` makes one event another rank's. */
export function copyEventsToRanks(
  events: readonly TraceEvent[],
  ranks: readonly number[],
  copy: (e: TraceEvent, rank: number) => TraceEvent = (e, rank) => ({ ...e, rank }),
): TraceEvent[] {
  const out: TraceEvent[] = [];
  for (const rank of ranks) for (const e of events) out.push(e.rank === rank ? e : copy(e, rank));
  return out;
}

export function copyMemoryToRanks(curve: MemoryCurve, ranks: readonly number[]): MemoryCurve[] {
  return ranks.map((rank) => (rank === curve.rank ? curve : { ...curve, rank }));
}
