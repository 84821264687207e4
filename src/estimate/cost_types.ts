// Cost-model contract shared by backends (to plan) and the simulator (to time).
// Pure: a CostModel is a value; per-rank models differ only by jitter or measurement.

import type { CollectiveKind, DType, GraphNode } from '../graph';

export interface CostModel {
  /** Estimated run time of a compute / cast / view node on one rank, µs. Waits and collective starts cost 0 here. */
  computeUs(node: GraphNode): number;
  /**
   * Estimated duration of a collective: bytes = gathered output (AG) or full input (RS, AR), per
   * rank; groupStride = rank distance between the group's members (default 1), which sets the
   * nodes it spans and so its network tier.
   */
  collectiveUs(kind: CollectiveKind, bytes: number, groupSize: number, dtype: DType, groupStride?: number): number;
  /**
   * Fraction by which compute slows while a collective runs on the same GPU (SM and HBM contention,
   * estimate/hardware.ts); absent or 0: overlapped compute runs as fast as alone.
   */
  readonly overlapSlowdown?: number;
  /** Short label for UI and traces, e.g. 'h100 roofline + ib-400 ring'. */
  readonly label: string;
}
