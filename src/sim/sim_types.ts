// Simulator contract: time a schedule on N ranks with a cost model per rank.

import type { Schedule } from '../backends';
import type { CostModel } from '../estimate';
import type { MemoryCurve, TraceEvent } from '../trace';

export interface SimOptions {
  readonly worldSize: number;
  /** One schedule per rank, or one shared by all (the normal, aligned case). */
  readonly schedules: Schedule | readonly Schedule[];
  /** One cost model per rank, or one shared (no jitter: ranks are symmetric and simulated once). */
  readonly cost: CostModel | readonly CostModel[];
  /** Ranks to emit events for (default all when < 64, else rank 0 only when symmetric). */
  readonly emitRanks?: readonly number[];
}

/** Ranks disagreed on a collective: the hang torch's cross-rank alignment prevents. */
export interface CollectiveMismatch {
  readonly seq: number; // n-th collective issued on the group
  readonly ranks: readonly [number, number];
  readonly ops: readonly [string, string]; // descriptor of each rank's collective at seq
  readonly timeUs: number; // when the later rank issued it
}

export interface SimResult {
  readonly worldSize: number;
  readonly symmetric: boolean; // true: one rank simulated, stands for all
  readonly events: readonly TraceEvent[];
  readonly memory: readonly MemoryCurve[];
  readonly stepUs: number; // max over ranks of the last event end
  readonly mismatch?: CollectiveMismatch;
}
