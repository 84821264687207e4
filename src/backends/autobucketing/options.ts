// Knobs of aot_eager_autobucketing with torch 2.11's defaults (the arguments of
// torch._inductor.fx_passes.overlap_scheduling.schedule_overlap_bucketing as SimpleFSDP's
// aot_eager_autobucketing backend calls it, and OverlapPreservingBucketer's bucket cap).
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { KnobSpecs } from '../options';

export interface AutobucketingOptions {
  /** Most collective bytes (input + output, GiB) in flight at once; more fragments the caching allocator. */
  max_in_flight_gb: number;
  /** A collective may be started at most this many compute nodes before the compute node it feeds. */
  max_compute_pre_fetch: number;
  /** Only the next this-many unscheduled collectives are prefetch candidates (and bucketing looks this far); bounds compile time. */
  max_coll_distance: number;
  /** Scale on compute time when hiding communication (torch's spelling, 'multipler', kept verbatim). */
  compute_overlap_multipler: number;
  /** Peak memory may rise above the original order's peak by the larger of this (GiB) ... */
  max_memory_increase_gb: number;
  /** ... and this fraction of the original peak. */
  max_memory_increase_ratio: number;
  /** Bucket the least-hidden collectives first (they gain most from fewer launches); 'auto' (torch 2.13's None): only on groups carrying FSDP all-gathers. */
  bucket_exposed_first: 'true' | 'false' | 'auto';
  /** Run the overlap-preserving bucketer after scheduling. */
  collective_bucketing: boolean;
  /** torch test_configs.assume_bucketing_reduces_latency: a collective started while a same-kind one is in flight counts without its latency. */
  assume_bucketing_reduces_latency: boolean;
  /** Byte cap of one bucket (sum of members' input + output bytes, GiB): torch passes max_bucket_memory_gb=2.0. */
  max_bucket_memory_gb: number;
  /** Prefetch candidates grouped by bucket key, so same-bucket collectives start together and can merge. */
  prioritize_bucketing_during_scheduling: boolean;
  /** torch 2.13: off-path collectives (backward reduce-scatters) wait until this many GiB of one key are ready, then go together; 0 = None (off, as in 2.11). */
  max_off_bucket_gb: number;
  /** Bucket only the groups that carry FSDP all-gathers (torch's proxy for inter-node groups). */
  bucket_only_internode_comms: boolean;
}

export const AUTOBUCKETING_DEFAULTS: Readonly<AutobucketingOptions> = {
  max_in_flight_gb: 5,
  max_compute_pre_fetch: 200,
  max_coll_distance: 200,
  compute_overlap_multipler: 1.0,
  max_memory_increase_gb: 1.0,
  max_memory_increase_ratio: 0.05,
  bucket_exposed_first: 'true',
  collective_bucketing: true,
  assume_bucketing_reduces_latency: true,
  max_bucket_memory_gb: 2.0,
  prioritize_bucketing_during_scheduling: true,
  max_off_bucket_gb: 0,
  bucket_only_internode_comms: false,
};

/**
 * Knob profiles: 'torch-2.11' (the defaults above: the arguments the seed's torch 2.11 used, and
 * the reference graphs were passed with) and 'torch-2.13' (2.13's own defaults where it has a knob
 * for them: bucket_exposed_first None → auto, max_off_bucket_gb 0.5). 2.13's FSDP pre-bucketing
 * and fusion regions are code, not ported: the 2.13 profile runs without them.
 */
export const AUTOBUCKETING_PROFILES: Readonly<Record<'torch-2.11' | 'torch-2.13', Readonly<AutobucketingOptions>>> = {
  'torch-2.11': AUTOBUCKETING_DEFAULTS,
  'torch-2.13': { ...AUTOBUCKETING_DEFAULTS, bucket_exposed_first: 'auto', max_off_bucket_gb: 0.5 },
};

export const AUTOBUCKETING_KNOBS: KnobSpecs<AutobucketingOptions> = {
  max_in_flight_gb: { type: 'number', min: 0, max: Infinity },
  max_compute_pre_fetch: { type: 'number', min: 0, max: Infinity, integer: true },
  max_coll_distance: { type: 'number', min: 0, max: Infinity, integer: true },
  compute_overlap_multipler: { type: 'number', min: 0, max: Infinity },
  max_memory_increase_gb: { type: 'number', min: 0, max: Infinity },
  max_memory_increase_ratio: { type: 'number', min: 0, max: Infinity },
  bucket_exposed_first: { type: 'enum', values: ['true', 'false', 'auto'] },
  collective_bucketing: { type: 'boolean' },
  assume_bucketing_reduces_latency: { type: 'boolean' },
  max_bucket_memory_gb: { type: 'number', min: 0, max: Infinity },
  prioritize_bucketing_during_scheduling: { type: 'boolean' },
  max_off_bucket_gb: { type: 'number', min: 0, max: Infinity },
  bucket_only_internode_comms: { type: 'boolean' },
};

/** torch's gb_to_bytes: GiB. */
export const gbToBytes = (gb: number): number => Math.floor(gb * 1024 * 1024 * 1024);
