// Backend contract: each backend is one pure function (graph, cost, options) → Schedule.
// A Schedule is a rewritten graph in execution order, the buckets it formed and the reasons
// for each decision (what the explain panel shows).

import type { CostModel } from '../estimate';
import type { CollectiveKind, StepGraph } from '../graph';

export type BackendName = 'aot_eager' | 'aot_eager_autobucketing' | 'transformer_block' | 'fsdp2_eager';

export const BACKEND_NAMES: readonly BackendName[] = [
  'aot_eager',
  'aot_eager_autobucketing',
  'transformer_block',
  'fsdp2_eager',
];

export interface Bucket {
  readonly id: number;
  readonly kind: CollectiveKind;
  readonly key: string; // all-gather: group|dtype; reduce-scatter: group|op|dtype
  readonly node: string; // name of the merged collective node in schedule.graph
  readonly members: readonly string[]; // names of the original collectives, in issue order
  readonly bytes: number; // total output (AG) / input (RS) bytes per rank
}

export type ReasonCode =
  | 'program_order' // aot_eager: left where the program put it
  | 'prefetched' // started early, hidden behind compute
  | 'not_prefetched_in_flight_budget'
  | 'not_prefetched_memory_budget'
  | 'not_prefetched_compute_distance' // beyond max_compute_pre_fetch
  | 'not_prefetched_coll_distance' // beyond max_coll_distance
  | 'not_prefetched_depends_on_compute' // needs this or another unfinished compute node
  | 'not_prefetched_no_compute' // no compute node left to hide behind
  | 'exposed' // its wait came before enough compute to hide it
  | 'bucketed'
  | 'not_bucketed_path_between_starts'
  | 'not_bucketed_hiding_compute_not_between'
  | 'not_bucketed_byte_cap'
  | 'not_bucketed_key_mismatch'
  | 'not_bucketed_would_expose'
  | 'block_bucket' // transformer_block: one bucket per block
  | 'block_prefetch';

export interface Reason {
  readonly node: string; // an original collective's name
  readonly code: ReasonCode;
  readonly text: string; // one sentence for people: 'not prefetched: in-flight budget full (5.2 GB > 5 GB)'
}

export interface Schedule {
  readonly backend: BackendName;
  readonly graph: StepGraph; // rewritten graph, nodes in execution order (node.id === position)
  readonly buckets: readonly Bucket[];
  readonly reasons: readonly Reason[];
  readonly options: Readonly<Record<string, number | boolean | string>>;
  /**
   * Non-collective nodes this backend runs on a stream of their own (node name → stream name), in
   * schedule order there; absent: every such node runs on the compute stream (fsdp2_eager: the
   * all-gather copy-in stream).
   */
  readonly sideStreams?: Readonly<Record<string, string>>;
  /** What torch's pass would log, per graph it ran on (autobucketing only). */
  readonly passStats?: readonly PassStats[];
  /** Autobucketing: the torch knob profile its options are ('custom' when they match neither). */
  readonly torchProfile?: 'torch-2.11' | 'torch-2.13' | 'custom';
}

/** torch's own accounting of one pass over one graph (its "Overlap scheduling results" line and decisions). */
export interface PassStats {
  readonly phase: string;
  /** The graph's collectives (FX names), in torch's registration order. */
  readonly collectives: readonly string[];
  readonly collectivesBefore: number;
  readonly collectivesAfter: number;
  /** torch total_potential_exposed_ms: every collective's estimate, summed. */
  readonly potentialExposedMs: number;
  /** torch total_exposed_ms: what the scheduler itself left exposed, before bucketing. */
  readonly scheduledExposedMs: number;
  readonly originalPeakBytes: number;
  readonly allowedPeakBytes: number;
  /** torch rescheduled_peak_memory (its estimate; torch does not enforce the budget). */
  readonly peakBytes: number;
  /** Prefetched collective → the node whose time it was started behind ("Overlapping collective X with node Y"). */
  readonly overlapping: Readonly<Record<string, readonly string[]>>;
  /** Buckets as torch forms them: original collective names, the seed first. */
  readonly buckets: readonly (readonly string[])[];
  /** Where the runtimes came from: nodes timed by their own torch estimate (an imported est_ms), of all timed nodes. */
  readonly estimates: { readonly fromGraph: number; readonly total: number };
  /**
   * torch 2.13's FSDP pre-bucketing of this graph, when it ran and found an FSDP group: its cap,
   * its merges (original names), and what timed the merged collectives.
   */
  readonly preBucketing?: {
    readonly capMb: number;
    readonly buckets: readonly (readonly string[])[];
    /** The FX name of each merged collective (as torch's log and `overlapping` name it), by bucket. */
    readonly merged: readonly string[];
    readonly estimator: 'torch-2.13-analytical-nccl' | 'cost-model';
  };
}

export type Backend<O = Record<string, number | boolean | string>> = {
  readonly name: BackendName;
  readonly run: (graph: StepGraph, cost: CostModel, options?: Partial<O>) => Schedule;
};
