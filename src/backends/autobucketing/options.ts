// Knobs of aot_eager_autobucketing (the arguments of
// torch._inductor.fx_passes.overlap_scheduling.schedule_overlap_bucketing as SimpleFSDP's
// aot_eager_autobucketing backend calls it, and OverlapPreservingBucketer's bucket cap), as
// profiles by torch version: torch 2.15's are the defaults, torch 2.11's the seed's.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { KnobSpecs } from '../knob_specs';

export interface AutobucketingOptions {
  /** Most collective bytes (input + output, GiB) in flight at once; more fragments the caching allocator. */
  max_in_flight_gb: number;
  /** A collective may be started at most this many compute nodes before the compute node it feeds. */
  max_compute_pre_fetch: number;
  /**
   * Only the next this-many unscheduled collectives are prefetch candidates (and bucketing looks this
   * far); bounds compile time.
   */
  max_coll_distance: number;
  /** Scale on compute time when hiding communication (torch's spelling, 'multipler', kept verbatim). */
  compute_overlap_multipler: number;
  /** Peak memory may rise above the original order's peak by the larger of this (GiB) ... */
  max_memory_increase_gb: number;
  /** ... and this fraction of the original peak. */
  max_memory_increase_ratio: number;
  /**
   * Bucket the least-hidden collectives first (they gain most from fewer launches); 'auto' (torch
   * 2.13's None): only on groups carrying FSDP all-gathers.
   */
  bucket_exposed_first: 'true' | 'false' | 'auto';
  /** Run the overlap-preserving bucketer after scheduling. */
  collective_bucketing: boolean;
  /**
   * torch test_configs.assume_bucketing_reduces_latency: a collective started while a same-kind one
   * is in flight counts without its latency.
   */
  assume_bucketing_reduces_latency: boolean;
  /** Byte cap of one bucket (sum of members' input + output bytes, GiB): torch passes max_bucket_memory_gb=2.0. */
  max_bucket_memory_gb: number;
  /** Prefetch candidates grouped by bucket key, so same-bucket collectives start together and can merge. */
  prioritize_bucketing_during_scheduling: boolean;
  /**
   * torch 2.13: off-path collectives (backward reduce-scatters) wait until this many GiB of one key
   * are ready, then go together; 0 = None (off, as in 2.11).
   */
  max_off_bucket_gb: number;
  /** Bucket only the groups that carry FSDP all-gathers (torch's proxy for inter-node groups). */
  bucket_only_internode_comms: boolean;
  /** torch 2.13: before scheduling, merge adjacent FSDP all-gathers / reduce-scatters into link-saturating buckets. */
  pre_bucketing_fsdp_collectives: boolean;
  /** Pre-bucket cap, MB; 0 = None: from the interconnect's saturation size. */
  pre_bucketing_fsdp_collectives_bucket_cap_mb: number;
  /** Floor of the computed cap, MB. */
  pre_bucketing_fsdp_collectives_min_bucket_cap_mb: number;
  /** Ceiling of the computed cap, MB. */
  pre_bucketing_fsdp_collectives_max_bucket_cap_mb: number;
  /** Scale on the saturation size before clipping. */
  pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: number;
  /** GPU generation torch detects (picks its NCCL tables, NVLink and IB profiles). */
  nccl_gpu_type: 'volta' | 'ampere' | 'hopper' | 'blackwell';
  /** GPUs per node torch assumes (torch.cuda.device_count(); 8 without CUDA). */
  nccl_gpus_per_node: number;
  /** torch bucket_mode: 'coalesced' merges reduce-scatters copy-free (one NCCL group); all-gathers as 'default'. */
  bucket_mode: 'default' | 'coalesced';
  /**
   * torch 2.15: while the scheduler handles a wait (its exposed time prefetches other groups'
   * collectives), a wait handled inside it does not hide that outer collective, and a candidate the
   * nested handling already started is skipped. Off: torch <= 2.14.
   */
  guard_nested_waits: boolean;
}

/** torch 2.11's arguments (the seed's profile; the reference graphs were passed with them). */
const TORCH_2_11: Readonly<AutobucketingOptions> = {
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
  pre_bucketing_fsdp_collectives: false,
  pre_bucketing_fsdp_collectives_bucket_cap_mb: 0,
  pre_bucketing_fsdp_collectives_min_bucket_cap_mb: 10,
  pre_bucketing_fsdp_collectives_max_bucket_cap_mb: 500,
  pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: 1.0,
  nccl_gpu_type: 'hopper',
  nccl_gpus_per_node: 8,
  bucket_mode: 'default',
  guard_nested_waits: false,
};

/**
 * What torch 2.13 does by default as torchtitan calls it: FSDP pre-bucketing on, bucket_exposed_first
 * None → auto, max_off_bucket_gb 0.5. Fusion regions stay off (torchtitan leaves them off).
 */
const TORCH_2_13: Readonly<AutobucketingOptions> = {
  ...TORCH_2_11,
  bucket_exposed_first: 'auto',
  max_off_bucket_gb: 0.5,
  pre_bucketing_fsdp_collectives: true,
};

/**
 * torch 2.14.1: what this pass reads is 2.13's (wheels diffed, torch/_inductor/fx_passes/
 * overlap_scheduling.py, overlap_preserving_bucketer.py, bucketing.py, fsdp.py, memory_estimator.py,
 * comm_analysis.py, the aten_distributed_optimizations config): asserts became raises, SymInt hints
 * are read as x.hint, nothing that decides or estimates. New in 2.14's config,
 * enable_simple_overlap=True (#184225) runs in inductor's Scheduler (scheduler.py ->
 * comms.simple_overlap), after lowering: the aot_eager backend SimpleFSDP's autobucketing uses never
 * reaches it. The manual scheduler's changes (overlap_manual_scheduling.py: #184711, #187341,
 * #188472) are torchtitan's manual pass, not this one. So 2.14 is 2.13's knobs, and a side drawn with
 * them is named torch 2.13 (profileOf names the oldest profile with a side's knobs).
 */
const TORCH_2_14: Readonly<AutobucketingOptions> = { ...TORCH_2_13 };

/**
 * torch 2.15.0: 2.14 plus one change to the scheduler (overlap_scheduling.py,
 * wait_starts_being_handled / _would_reenter_wait): a wait handled inside another wait's handling
 * no longer hides the outer collective (_reduce_exposed_time_of_in_flight_collectives skips it), a
 * prefetch candidate already started by nested handling is skipped, and a prefetch path or a forced
 * wait that would handle an active wait again is refused (the port always refused those: in torch
 * <= 2.14 they recursed without end). The first part needs three process groups or more (HSDP x TP):
 * with two, a wait's prefetch for the other group stops before a nested wait could be exposed (the
 * other group's earlier collectives soak up the time first), so FSDP x TP graphs decide as in 2.14.
 * Also in 2.15, none on this pass's default path: bucket_mode "custom_ops" copies out with
 * split_with_sizes_copy, groups foreach copy-in by (dtypes, contiguous) and elides padded
 * reduce-scatter inputs (bucketing.py; the default mode, "default", is unchanged);
 * deduplicate_wait_tensors runs in inductor's post-grad passes; the memory caps' docstring now says
 * max, as the code always did (#192628); a MemoryTracker is skipped when both memory caps are None
 * (both are set here). fsdp.py (pre-bucketing), comm_analysis.py and memory_estimator.py are 2.13's.
 */
const TORCH_2_15: Readonly<AutobucketingOptions> = { ...TORCH_2_14, guard_nested_waits: true };

export type TorchProfile = 'torch-2.11' | 'torch-2.13' | 'torch-2.14' | 'torch-2.15';

/** Knob profiles by torch version (`--torch-profile 2.11|2.13|2.14|2.15`), oldest first. */
export const AUTOBUCKETING_PROFILES: Readonly<Record<TorchProfile, Readonly<AutobucketingOptions>>> = {
  'torch-2.11': TORCH_2_11,
  'torch-2.13': TORCH_2_13,
  'torch-2.14': TORCH_2_14,
  'torch-2.15': TORCH_2_15,
};

/**
 * The default profile: torch 2.15's (what installs today; the port reaches 2.15.0's answers on the
 * fixtures it made, test/fixtures/torch_pass/v2_15 and torch_pass_2d/v2_15); `--torch-profile 2.13`
 * or `2.11` selects an older one.
 */
export const DEFAULT_TORCH_PROFILE: TorchProfile = 'torch-2.15';

/** The defaults: the default profile's knobs (the very object, so profileOf names it). */
export const AUTOBUCKETING_DEFAULTS: Readonly<AutobucketingOptions> = AUTOBUCKETING_PROFILES[DEFAULT_TORCH_PROFILE];

/** A profile as people name it: `torch 2.13`. */
export const torchProfileLabel = (p: TorchProfile | 'custom'): string => p.replace(/^torch-/, 'torch ');

/** The oldest profile whose knobs `opts` are (2.14's are 2.13's: 'torch-2.13'), or 'custom'. */
export function profileOf(opts: Readonly<AutobucketingOptions>): TorchProfile | 'custom' {
  for (const [name, p] of Object.entries(AUTOBUCKETING_PROFILES) as [TorchProfile, AutobucketingOptions][]) {
    if ((Object.keys(p) as (keyof AutobucketingOptions)[]).every((k) => p[k] === opts[k])) return name;
  }
  return 'custom';
}

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
  pre_bucketing_fsdp_collectives: { type: 'boolean' },
  pre_bucketing_fsdp_collectives_bucket_cap_mb: { type: 'number', min: 0, max: Infinity },
  pre_bucketing_fsdp_collectives_min_bucket_cap_mb: { type: 'number', min: 0, max: Infinity },
  pre_bucketing_fsdp_collectives_max_bucket_cap_mb: { type: 'number', min: 0, max: Infinity },
  pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: { type: 'number', min: 0, max: Infinity },
  nccl_gpu_type: { type: 'enum', values: ['volta', 'ampere', 'hopper', 'blackwell'] },
  nccl_gpus_per_node: { type: 'number', min: 1, max: Infinity, integer: true },
  bucket_mode: { type: 'enum', values: ['default', 'coalesced'] },
  guard_nested_waits: { type: 'boolean' },
};

/** torch's gb_to_bytes: GiB. */
export const gbToBytes = (gb: number): number => Math.floor(gb * 1024 * 1024 * 1024);
