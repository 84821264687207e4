// Knobs of aot_eager_autobucketing (the arguments of
// torch._inductor.fx_passes.overlap_scheduling.schedule_overlap_bucketing as SimpleFSDP's
// aot_eager_autobucketing backend calls it, and OverlapPreservingBucketer's bucket cap), as
// profiles by torch version: torch 2.15's are the defaults, torch 2.11's the seed's.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { KnobHelp, KnobSpec, KnobValue } from '../knob_specs';

const AB = 'schedule_overlap_bucketing';
const GIB_MAX = 1024; // GiB: past any GPU's memory, so the top of the range caps nothing in practice
const COUNT_MAX = 100_000; // compute nodes or collectives: past any step graph's length
const SCALE_MAX = 100;
const MB_MAX = 1_000_000; // a terabyte

/**
 * The knobs, one row each: name (the key, torch's), type, range, integer-ness and help (what it
 * does, what raising it costs, torch's argument). Their values by torch version are the profiles
 * below; the config's field table, URL, CLI, panel and glossary all derive from these rows.
 */
/** The guard is torch 2.15's behaviour, not a pass argument; the knob picks it. */
const NOT_AN_ARGUMENT = 'not an argument (guard_nested_waits=… picks it)';

export const AUTOBUCKETING_KNOBS = {
  // more collective bytes in flight also fragment the caching allocator
  max_in_flight_gb: {
    type: 'number',
    min: 0,
    max: GIB_MAX,
    help: {
      does: 'Most collective bytes (GiB) in flight at once.',
      cost: 'raising it: more prefetch overlapping, more memory and allocator fragmentation',
      torch: `${AB}(max_in_flight_gb=…)`,
    },
  },
  // counted in compute nodes before the compute node the collective feeds
  max_compute_pre_fetch: {
    type: 'number',
    min: 0,
    max: COUNT_MAX,
    integer: true,
    help: {
      does: 'How many compute nodes ahead of its use an all-gather may start.',
      cost: 'raising it: earlier prefetch, gathered weights live longer (memory)',
      torch: `${AB}(max_compute_pre_fetch=…)`,
    },
  },
  // only the next this-many unscheduled collectives are candidates (bucketing looks as far): bounds compile time
  max_coll_distance: {
    type: 'number',
    min: 0,
    max: COUNT_MAX,
    integer: true,
    help: {
      does: 'How many upcoming collectives are prefetch and bucket candidates.',
      cost: 'raising it: more choices, slower compile',
      torch: `${AB}(max_coll_distance=…)`,
    },
  },
  // torch's spelling, 'multipler', kept verbatim
  compute_overlap_multipler: {
    type: 'number',
    min: 0,
    max: SCALE_MAX,
    help: {
      does: 'Scale on compute time when deciding what hides a collective.',
      cost: 'raising it: assumes more hiding, may leave comm exposed in reality',
      torch: `${AB}(compute_overlap_multipler=…)`,
    },
  },
  // peak memory may rise above the original order's peak by the larger of this and the ratio's share
  max_memory_increase_gb: {
    type: 'number',
    min: 0,
    max: GIB_MAX,
    help: {
      does: 'Peak memory may grow over the original order by this much (GiB) …',
      cost: 'raising it: more prefetch, higher peak',
      torch: `${AB}(max_memory_increase_gb=…)`,
    },
  },
  max_memory_increase_ratio: {
    type: 'number',
    min: 0,
    max: SCALE_MAX,
    help: {
      does: '… or by this fraction of the original peak, whichever is larger.',
      cost: 'raising it: more prefetch, higher peak',
      torch: `${AB}(max_memory_increase_ratio=…)`,
    },
  },
  // 'auto' (torch 2.13's None): only on groups carrying FSDP all-gathers
  bucket_exposed_first: {
    type: 'enum',
    values: ['true', 'false', 'auto'],
    help: {
      does: 'Bucket the least hidden collectives first (they gain most).',
      torch: `${AB}(bucket_exposed_first=…)`,
    },
  },
  // the overlap-preserving bucketer after scheduling
  collective_bucketing: {
    type: 'boolean',
    help: {
      does: 'Merge collectives into buckets after scheduling.',
      cost: 'off: one launch per parameter',
      torch: `${AB}(collective_bucketing=…)`,
    },
  },
  // a collective started while a same-kind one is in flight counts without its latency
  assume_bucketing_reduces_latency: {
    type: 'boolean',
    help: {
      does: 'A collective started while a same-kind one is in flight pays no extra latency.',
      torch: 'test_configs.assume_bucketing_reduces_latency',
    },
  },
  // sum of the members' input + output bytes; torch passes max_bucket_memory_gb=2.0
  max_bucket_memory_gb: {
    type: 'number',
    min: 0,
    max: GIB_MAX,
    help: {
      does: 'Byte cap of one bucket (GiB, inputs + outputs).',
      cost: 'raising it: fewer, bigger launches; more memory per bucket',
      torch: 'OverlapPreservingBucketer(max_bucket_memory_gb=…)',
    },
  },
  // candidates grouped by bucket key, so same-bucket collectives start together and can merge
  prioritize_bucketing_during_scheduling: {
    type: 'boolean',
    help: {
      does: 'Start same-bucket collectives together while scheduling, so they can merge.',
      cost: 'on: fewer launches, sometimes a later start for one of them',
      torch: `${AB}(prioritize_bucketing_during_scheduling=…)`,
    },
  },
  // torch 2.13; 0 = None (off, as in 2.11)
  max_off_bucket_gb: {
    type: 'number',
    min: 0,
    max: GIB_MAX,
    help: {
      does:
        'Off-path collectives (backward reduce-scatters) wait until this many GiB of one kind are ready, then go ' +
        'together (0: off).',
      cost: 'raising it: bigger reduce-scatter buckets, gradients held longer (memory)',
      torch: `${AB}(max_off_bucket_gb=…)`,
    },
  },
  // groups carrying FSDP all-gathers: torch's proxy for inter-node groups
  bucket_only_internode_comms: {
    type: 'boolean',
    help: {
      does: 'Bucket only the process groups that cross nodes (the FSDP all-gathers).',
      torch: `${AB}(bucket_only_internode_comms=…)`,
    },
  },
  // torch 2.13: before scheduling, into link-saturating buckets
  pre_bucketing_fsdp_collectives: {
    type: 'boolean',
    help: {
      does:
        'torch 2.13: before scheduling, merge neighbouring FSDP all-gathers (and reduce-scatters) into ' +
        'buckets big enough to saturate the link.',
      cost: "on: fewer launches, a layer's weights may arrive with the next layer's",
      torch: `${AB}(pre_bucketing_fsdp_collectives=…)`,
    },
  },
  // MB; 0 = None: from the interconnect's saturation size
  pre_bucketing_fsdp_collectives_bucket_cap_mb: {
    type: 'number',
    min: 0,
    max: MB_MAX,
    help: {
      does: 'Pre-bucket cap in MB; 0 lets torch size it from the link (its saturation model).',
      torch: `${AB}(pre_bucketing_fsdp_collectives_bucket_cap_mb=…)`,
    },
  },
  pre_bucketing_fsdp_collectives_min_bucket_cap_mb: {
    type: 'number',
    min: 0,
    max: MB_MAX,
    help: {
      does: 'Smallest pre-bucket cap torch computes (MB).',
      torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_min_bucket_cap_mb=…',
    },
  },
  pre_bucketing_fsdp_collectives_max_bucket_cap_mb: {
    type: 'number',
    min: 0,
    max: MB_MAX,
    help: {
      does: 'Largest pre-bucket cap torch computes (MB).',
      torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_max_bucket_cap_mb=…',
    },
  },
  pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: {
    type: 'number',
    min: 0,
    max: SCALE_MAX,
    help: {
      does: 'Scale on the link-saturation size before it is clipped to the cap range.',
      torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier=…',
    },
  },
  // picks torch's NCCL tables, NVLink and IB profiles
  nccl_gpu_type: {
    type: 'enum',
    values: ['volta', 'ampere', 'hopper', 'blackwell'],
    help: {
      does:
        'GPU generation torch detects: picks its NCCL tables and NVLink / InfiniBand profiles for the ' +
        "pre-bucket cap and the merged collectives' estimates.",
      torch: 'what comm_analysis.get_gpu_type() returns (nccl_gpu_type=…)',
    },
  },
  nccl_gpus_per_node: {
    type: 'number',
    min: 1,
    max: 1024,
    integer: true,
    help: {
      does: 'GPUs per node torch assumes when it decides whether a group stays on NVLink.',
      torch: 'torch.cuda.device_count(), 8 without CUDA (nccl_gpus_per_node=…)',
    },
  },
  // all-gathers merge as in 'default' either way
  bucket_mode: {
    type: 'enum',
    values: ['default', 'coalesced'],
    help: {
      does:
        'How torch merges a bucket. default: copy the members into one buffer, one collective, copy out. ' +
        "coalesced: reduce-scatters go as one NCCL group call over the members' own tensors, no copies " +
        '(all-gathers merge as in default); a coalesced pre-bucket is not bucketed again.',
      cost: 'coalesced: no copy-in / copy-out time or buffer, but the copies no longer hide communication',
      torch: `${AB}(bucket_mode=…)`,
    },
  },
  // torch 2.15 (see TORCH_2_15 below); off: torch <= 2.14
  guard_nested_waits: {
    type: 'boolean',
    help: {
      does:
        "torch 2.15: while a wait's exposed time prefetches another group's collectives, a wait handled " +
        'inside that does not hide the outer collective. Off: torch 2.14 and before.',
      cost: 'on: the outer collective keeps more exposed time (three process groups or more, e.g. HSDP × TP)',
      torch: `torch 2.15's OverlapScheduler.wait_starts_being_handled, ${NOT_AN_ARGUMENT}`,
    },
  },
  // inductor's pass, not this one's: on, fsdp-sim runs its port on the schedule this pass made.
  // PR #189729 would turn it off after deadlocks; 2.15.0's config still has it on.
  simple_overlap: {
    type: 'boolean',
    help: {
      does:
        "Runs inductor's simple_overlap on the schedule: each collective moves up and each wait down by " +
        'adjacent swaps, never past another collective (wait), a node it depends on, or the starting memory peak.',
      cost:
        'on: more overlap where the schedule left room; the peak the pass counts (buffers freed after their ' +
        "last user) never rises, the simulator's may; no runtime estimate is read",
      torch:
        'torch._inductor.config.aten_distributed_optimizations.enable_simple_overlap: on by default in ' +
        "2.14.1 and 2.15.0, but it runs only in inductor's Scheduler (compile.backend inductor), never on " +
        "SimpleFSDP's aot_eager backends, so every profile has it off (simple_overlap=… picks it)",
    },
  },
} as const satisfies Readonly<Record<string, KnobSpec & { readonly help: KnobHelp }>>;

/** The knobs' values, typed by their rows. */
export type AutobucketingOptions = {
  -readonly [K in keyof typeof AUTOBUCKETING_KNOBS]: KnobValue<(typeof AUTOBUCKETING_KNOBS)[K]>;
};

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
  simple_overlap: false,
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

/** torch's gb_to_bytes: GiB. */
export const gbToBytes = (gb: number): number => Math.floor(gb * 1024 * 1024 * 1024);
