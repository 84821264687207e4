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
  | 'block_bucket' // transformer_block: one bucket per module bucket plan entry
  | 'block_prefetch';

/**
 * The facts behind one reason, by the form of its sentence (src/words/ words them: the engine
 * emits no English). Node names are FX names as the user wrote them; times are torch's ms.
 */
export type ReasonDetail =
  /** aot_eager: the wait follows its collective at once. */
  | { readonly kind: 'program_position'; readonly coll: CollectiveKind }
  /** autobucketing: prefetched behind `behind`; `ahead`: compute nodes before its first use (null: off the path). */
  | {
      readonly kind: 'prefetched';
      readonly coll: CollectiveKind;
      readonly behind: string;
      readonly ahead: number | null;
      readonly estMs: number;
      readonly exposedMs: number;
    }
  /** autobucketing: a prefetch behind `behind` refused (`refusal`), and how much was hidden in the end. */
  | {
      readonly kind: 'refused';
      readonly behind: string;
      readonly refusal: PrefetchRefusalDetail;
      readonly estMs: number;
      readonly exposedMs: number;
    }
  /** autobucketing: issued from the ready queue and hidden by the work before its wait. */
  | { readonly kind: 'ready_queue_hidden'; readonly coll: CollectiveKind }
  /** autobucketing: issued from the ready queue; `estMs − exposedMs` of work ran before its wait. */
  | { readonly kind: 'ready_queue'; readonly coll: CollectiveKind; readonly estMs: number; readonly exposedMs: number }
  /** autobucketing: nothing ran between its start and its wait. */
  | { readonly kind: 'no_compute'; readonly coll: CollectiveKind; readonly exposedMs: number }
  | {
      readonly kind: 'bucketed';
      readonly coll: CollectiveKind;
      readonly members: number;
      readonly bucket: number;
      readonly bytes: number;
    }
  /** torch 2.13's FSDP pre-bucketing merged `members` collectives into `merged`. */
  | { readonly kind: 'pre_bucketed'; readonly members: number; readonly merged: string }
  /** Not bucketed with the bucket seeded by `seed`, for `why`. */
  | { readonly kind: 'not_bucketed'; readonly why: NotBucketedWhy; readonly seed: string }
  /** transformer_block: bucketed with the rest of plan entry `module` (`entry` of `entries`) in `phase`. */
  | {
      readonly kind: 'block_bucket';
      readonly coll: CollectiveKind;
      readonly members: number;
      readonly module: string;
      readonly phase: string;
      readonly entry: number;
      readonly entries: number;
    }
  /** transformer_block: an all-gather bucket started before `before` (a plan entry's wait, or a compute node). */
  | { readonly kind: 'block_prefetch_all_gather'; readonly before: string; readonly at: 'wait' | 'compute' }
  /** transformer_block: a reduce-scatter bucket whose wait waits for `next`'s start (null: no later bucket). */
  | { readonly kind: 'block_prefetch_reduce_scatter'; readonly module: string; readonly next: string | null }
  /** fsdp2_eager: one fully_shard module communicated as one flat buffer. */
  | {
      readonly kind: 'fsdp2_bucket';
      readonly coll: CollectiveKind;
      readonly phase: string;
      readonly group: string;
      readonly module: string;
    }
  /** fsdp2_eager: an all-gather prefetched one module ahead (implicit in forward, explicit in backward). */
  | { readonly kind: 'fsdp2_prefetch_all_gather'; readonly phase: string; readonly module: string }
  /** fsdp2_eager: a reduce-scatter waited one module later. */
  | { readonly kind: 'fsdp2_reduce_scatter'; readonly module: string };

/** Why autobucketing did not prefetch a collective behind a node. */
export type PrefetchRefusalDetail =
  | { readonly code: 'not_prefetched_compute_distance'; readonly computeNodesAhead: number }
  | { readonly code: 'not_prefetched_in_flight_budget'; readonly bytes: number; readonly limitBytes: number }
  | {
      readonly code: 'not_prefetched_memory_budget';
      readonly bytes: number;
      readonly limitBytes: number;
      readonly originalPeakBytes: number;
    }
  /** `blocker`: the node it needs (null: the node it would hide behind); `wait`: that node is a wait. */
  | {
      readonly code: 'not_prefetched_depends_on_compute';
      readonly blocker: string | null;
      readonly wait: boolean;
    };

/** torch's bucketer's reasons not to merge a collective into a bucket. */
export type NotBucketedWhy =
  | 'hides_other'
  | 'byte_cap'
  | 'ancestor'
  | 'hiding_not_between'
  | 'enclosed'
  | 'path_starts'
  | 'path_waits';

export interface Reason {
  readonly node: string; // an original collective's name
  readonly code: ReasonCode;
  readonly detail: ReasonDetail;
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
  readonly torchProfile?: 'torch-2.11' | 'torch-2.13' | 'torch-2.14' | 'torch-2.15' | 'custom';
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
