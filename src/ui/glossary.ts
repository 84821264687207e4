// Plain words for the app's vocabulary: the glossary's terms, what each config knob does and
// what raising it costs (with torch's argument name), and each backend reason code in plain
// language. One table per concept so the legend, the column heads, the knob tooltips and the
// explain panel all say the same thing.

import { torchtitanFlags, type SimConfig } from '../config';
import type { ReasonCode } from '../store';

export interface Term {
  readonly id: string;
  readonly term: string;
  readonly text: string;
}

/** torchtitan's name for the backend knobs; the command line itself follows, by version (backendFlagsHelp). */
const BACKEND_FLAG = 'compile.backend and its passes, as below for each torchtitan version';

/**
 * The one name of each memory figure, as torch names them (torch.cuda.max_memory_allocated /
 * max_memory_reserved; live tensors: what torch's overlap pass estimates). The metrics table, the
 * headline, the claims and the memory chart all say these.
 */
export const MEMORY_NAMES = {
  live: 'peak live tensors',
  allocated: 'peak allocated',
  reserved: 'peak reserved',
} as const;

/** Every term the timelines, the metrics and the explain panel use, in reading order. */
export const TERMS: readonly Term[] = [
  {
    id: 'fsdp', term: 'FSDP',
    text: 'Fully Sharded Data Parallel: every rank (GPU) trains on its own slice of the batch, but keeps only a 1/N ' +
      'slice of each parameter, so N ranks hold one copy of the model between them instead of N copies.',
  },
  {
    id: 'shard', term: 'shard',
    text: 'The 1/N slice of a parameter a rank keeps between uses (SimpleFSDP splits on dim 0).',
  },
  {
    id: 'all_gather', term: 'all-gather',
    text: 'A collective that collects every rank\'s shard so each rank briefly holds the whole parameter, right ' +
      'before a layer needs it. It moves (N−1)/N of the parameter over the network.',
  },
  {
    id: 'reduce_scatter', term: 'reduce-scatter',
    text: 'The backward\'s collective: sums one parameter\'s gradient over all ranks and leaves each rank only its ' +
      'own shard of the sum.',
  },
  {
    id: 'other_collectives', term: 'other collectives',
    text: 'Collectives of imported traces beyond FSDP\'s two: all-reduce (loss, gradient norm), send/recv, ' +
      'broadcast, all-to-all. HTA counts every one of them as communication.',
  },
  {
    id: 'wait', term: 'wait',
    text: 'The point where compute must stop until a collective has finished. The part of a wait while the ' +
      'collective runs is drawn red: exposed communication, as Metrics count it. The part before it starts ' +
      '(a peer has not issued it yet) is a wait for a late peer, counted as idle.',
  },
  {
    id: 'peer_wait', term: 'wait for a late peer',
    text: 'The part of a wait before its collective starts: this rank has issued it, but another rank of the group ' +
      'has not (a straggler, a slower plan). No kernel runs, so Metrics count it as idle, not as exposed ' +
      'communication; the timeline draws it in its own colour.',
  },
  {
    id: 'exposed', term: 'exposed communication',
    text: 'Communication time no compute runs under: the GPU waits for the network. Lower is better; it adds ' +
      'straight onto the step time.',
  },
  {
    id: 'overlap', term: 'overlap',
    text: 'The share of communication time hidden under compute (HTA\'s comm/compute overlap). 100 % means the ' +
      'network never made the GPU wait. Over ranks it is pooled: Σ overlap / Σ communication time.',
  },
  {
    id: 'prefetch', term: 'prefetch',
    text: 'Starting an all-gather early, several layers before its parameter is used, so it runs while earlier ' +
      'layers compute. It costs memory: the gathered parameter lives longer.',
  },
  {
    id: 'bucket', term: 'bucket',
    text: 'Several small collectives merged into one launch. Each launch pays a fixed latency (α), so one bucket of ' +
      'ten is cheaper than ten launches, if the merge does not delay anyone.',
  },
  {
    id: 'step', term: 'step time',
    text: 'Wall time of one training step (forward, backward, optimizer), spanned over ranks: from the first ' +
      'kernel start on any rank to the last kernel end on any rank, so the slowest rank sets it. A step that ' +
      'hangs has none.',
  },
  {
    id: 'peak', term: MEMORY_NAMES.live,
    text: 'The most bytes of live tensors one rank holds at once during the step (shards, optimizer state, gathered ' +
      "parameters, activations, gradients), by the tensors' lifetimes in the graph: what torch's overlap pass " +
      'estimates its memory with. The maximum over ranks; no allocator rounding, and not the tensors a graph op ' +
      'hides (the fp32 logits of the loss).',
  },
  {
    id: 'peak_allocated', term: MEMORY_NAMES.allocated,
    text: 'torch.cuda.max_memory_allocated: the most bytes live tensors hold at once, in the CUDA caching ' +
      "allocator's 512-byte blocks, including what the step allocates beyond the graph (the fp32 logits and " +
      "their gradient). Of rank 0's schedule, over the whole step.",
  },
  {
    id: 'peak_reserved', term: MEMORY_NAMES.reserved,
    text: 'torch.cuda.max_memory_reserved: the memory the caching allocator holds from the GPU at most: ' +
      'allocated blocks plus the free space in its segments (rounding, a pool per stream, fragmentation). ' +
      "What torchtitan logs as \"memory:\", and what must fit in HBM. Of rank 0's schedule, over the whole step.",
  },
  {
    id: 'idle', term: 'idle',
    text: "Time no kernel runs on the GPU at all: no compute, no collective, no copy (HTA's idle time), such as a " +
      'wait for a late peer. A compute stream waiting on a running collective is not idle: that time is exposed ' +
      'communication.',
  },
  {
    id: 'compute', term: 'compute',
    text: "A kernel on the GPU's compute stream: matmul, attention, norm, the optimizer (in a live run also " +
      "'drain': queued kernels finishing before a readback).",
  },
  {
    id: 'memcpy', term: 'memcpy / sync',
    text: 'Copies, memsets and CUDA syncs of imported traces: GPU time that is neither compute nor a collective ' +
      '(HTA counts it as non-compute, not idle).',
  },
  {
    id: 'readback', term: 'readback',
    text: "Live run, measured clock: a rank copying a tensor from the GPU to the host (a loss, a collective's " +
      'input). Counted as memory-copy time.',
  },
  {
    id: 'upload', term: 'upload',
    text: "Live run, measured clock: a rank copying data from the host to the GPU (a batch, a collective's " +
      'result). Counted as memory-copy time.',
  },
  {
    id: 'barrier', term: 'barrier wait',
    text: "Live run, measured clock: a rank waiting for the other ranks at a collective's barrier. Counted as " +
      'sync time.',
  },
  {
    id: 'rank', term: 'rank',
    text: 'One GPU (here: one simulated device, or one Web Worker in a live run). Rank 0 … N−1.',
  },
  {
    id: 'backend', term: 'backend',
    text: 'The torch.compile backend that orders the step: aot_eager keeps the program order; ' +
      'aot_eager_autobucketing reorders collectives (prefetch) and merges them (buckets); transformer_block is the ' +
      'hand-written one-bucket-per-block plan.',
  },
  {
    id: 'clock', term: 'clock',
    text: 'Where a timeline\'s times come from: the cost model (simulated µs for the chosen GPU and network), a ' +
      'live run (your browser\'s real time, or the cost model replayed), or an imported trace. Numbers from ' +
      'different clocks are not comparable.',
  },
  {
    id: 'kernels', term: 'kernels (live)',
    text: "What computes a live run's nodes: WebGPU (WGSL shaders on this browser's GPU, one device per rank " +
      "worker) or CPU (the reference kernels, in each worker). 'auto' tries WebGPU and falls back to CPU when " +
      'the browser gives no WebGPU device; the headline names the kernels a run actually used.',
  },
];

export function termById(id: string): Term {
  const t = TERMS.find((x) => x.id === id);
  if (!t) throw new Error(`glossary has no term '${id}'; known: ${TERMS.map((x) => x.id).join(', ')}`);
  return t;
}

/** What a knob does and what raising it costs; `torch` names the upstream argument. */
export interface KnobHelp {
  readonly does: string;
  readonly cost?: string;
  readonly torch?: string;
}

const AB = 'schedule_overlap_bucketing';

export const KNOB_HELP: Readonly<Record<string, KnobHelp>> = {
  model: {
    does: 'Model size (torchtitan llama3 flavors; tiny is the one live runs train).',
    cost: 'bigger: more compute and more bytes per collective',
  },
  ranks: {
    does: 'Number of GPUs the model is sharded over.',
    cost: 'more: smaller shards, but every collective has more ring steps (latency)',
    torch: 'world_size',
  },
  localBatch: {
    does: 'Sequences per rank per step (empty: the preset\'s).',
    cost: 'more: longer compute that hides comm better, more activation memory',
    torch: 'training.local_batch_size',
  },
  seqLen: {
    does: 'Tokens per sequence (empty: the preset\'s).',
    cost: 'more: longer compute, more activation memory',
    torch: 'training.seq_len',
  },
  activationCheckpointing: {
    does: 'Drop activations in the forward and recompute them in the backward.',
    cost: 'full: least memory, ~1/3 more compute',
    torch: 'activation_checkpoint.mode',
  },
  hardware: { does: 'GPU model: sets matmul speed and HBM size.' },
  network: { does: 'Interconnect preset (latency α and bandwidth β of the links).' },
  bandwidthGBps: {
    does: 'Override the network bandwidth (GB/s; empty: the preset\'s).',
    cost: 'lower: every collective takes longer, more of it is exposed',
  },
  latencyUs: {
    does: 'Override the per-step latency α (µs; empty: the preset\'s).',
    cost: 'higher: many small collectives hurt; bucketing helps more',
  },
  backendA: { does: 'The backend timeline A runs.', torch: BACKEND_FLAG },
  backendB: { does: 'The backend timeline B runs.', torch: BACKEND_FLAG },
  paramDtype: {
    does: 'Dtype parameters are all-gathered in (SimpleFSDP mixed precision).',
    cost: 'fp32: twice the all-gather bytes of bf16',
    torch: 'mixed_precision_param',
  },
  reduceDtype: {
    does: 'Dtype gradients are reduce-scattered in.',
    cost: 'fp32: twice the reduce-scatter bytes of bf16, more exact sums',
    torch: 'mixed_precision_reduce',
  },
  seed: { does: 'Seed for jitter and live-run data: same seed, same result.' },
  jitterPct: {
    does: 'Random ± % noise on each rank\'s op times, as real GPUs drift.',
    cost: 'more: ranks fall out of step; without alignment they may choose different buckets',
  },
  alignment: {
    does: 'Ranks agree on one set of cost estimates before scheduling, so every rank picks the same buckets.',
    cost: 'off with jitter: ranks may disagree and the step hangs',
  },
  'straggler.rank': {
    does: 'One rank made slower than the rest (empty: none).',
    cost: 'every collective waits for it: the others\' waits grow',
  },
  'straggler.factor': { does: 'How much slower the straggler\'s compute is (×).' },
  'live.kernels': { does: 'Live run kernels: WebGPU (WGSL shaders) or CPU.' },
  'live.collectiveAlgorithm': {
    does: 'Live run collective: direct (each rank reads every shard) or ring (neighbour to neighbour, as NCCL).',
  },
  'live.steps': { does: 'Training steps a live run takes.' },
  'parallelism.data_parallel_shard_degree': {
    does: 'FSDP degree: ranks each parameter is sharded over (-1: the ranks TP and HSDP leave).',
    cost: 'more: smaller shards, more ring steps per all-gather',
    torch: 'parallelism.data_parallel_shard_degree',
  },
  'parallelism.data_parallel_replicate_degree': {
    does: 'HSDP: copies of the FSDP group; their gradient shards are all-reduced.',
    cost: 'more: an all-reduce per gradient, shards over fewer ranks (more memory)',
    torch: 'parallelism.data_parallel_replicate_degree',
  },
  'parallelism.tensor_parallel_degree': {
    does: 'Tensor parallel (with sequence parallel): ranks that split every linear and share one batch.',
    cost: 'more: less memory per rank, activation collectives on the critical path',
    torch: 'parallelism.tensor_parallel_degree',
  },
  // --- moesim: expert parallel and MoE routing ---
  'parallelism.expert_parallel_degree': {
    does: 'Expert parallel (MoE models): ranks the routed experts are split across; tokens travel to their '
      + 'experts and back by all-to-all.',
    cost: 'more: fewer experts per rank (less memory), an all-to-all pair per MoE block on the critical path',
    torch: 'parallelism.expert_parallel_degree',
  },
  moeLoadImbalance: {
    does: 'MoE routing: how many times its balanced share of tokens the busiest expert-parallel rank receives '
      + '(capped at ep: every routed token).',
    cost: 'more: larger all-to-alls and grouped GEMMs on the busiest rank, which every rank waits for',
  },
  // --- end moesim ---
  'parallelism.gpus_per_node': {
    does: 'GPUs per node: a process group inside a node runs on NVLink, one spanning nodes on IB.',
  },
  'seqParallelGatherCopy': {
    does: 'Older torch (before pytorch PR #169404, Dec 2025): copy every sequence-parallel all-gather\'s output '
      + '(torch.cat of its chunks). Off: torch 2.13, where it is a view.',
    cost: 'on: one activation copy per TP all-gather on the critical path',
  },
  reshardAfterForward: {
    does: 'Whether each parameter is all-gathered again for the backward (default and always: yes, no pipeline '
      + 'parallel here) or the forward\'s gathered copy is kept until its last backward use (never).',
    cost: 'never: no backward all-gathers, every gathered parameter stays in memory through the step',
    torch: 'parallelism.fsdp_reshard_after_forward',
  },
  compileMode: {
    does: 'jit: torch.compile splits a forward and a backward graph, each passed on its own. aot_fx_trace '
      + '(graph_trainer): one forward-loss-backward graph, passed once.',
    torch: 'compile.mode',
  },
  memoryPolicy: {
    does: 'What an aot_fx_trace graph recomputes in the backward: default (mm, SDPA, reduce-scatter saved), full, '
      + 'eager (every second mm recomputed) or none. jit reads activation ckpt instead.',
    cost: 'none: no recompute, most activation memory',
    torch: 'compile.memory_policy',
  },
  'live.timing': {
    does: 'Live timeline clock: preset replays the cost model\'s times for the live schedule; measured shows the '
      + 'browser\'s real time.',
  },
  'autobucketing.max_in_flight_gb': {
    does: 'Most collective bytes (GiB) in flight at once.',
    cost: 'raising it: more prefetch overlapping, more memory and allocator fragmentation',
    torch: `${AB}(max_in_flight_gb=…)`,
  },
  'autobucketing.max_compute_pre_fetch': {
    does: 'How many compute nodes ahead of its use an all-gather may start.',
    cost: 'raising it: earlier prefetch, gathered weights live longer (memory)',
    torch: `${AB}(max_compute_pre_fetch=…)`,
  },
  'autobucketing.max_coll_distance': {
    does: 'How many upcoming collectives are prefetch and bucket candidates.',
    cost: 'raising it: more choices, slower compile',
    torch: `${AB}(max_coll_distance=…)`,
  },
  'autobucketing.compute_overlap_multipler': {
    does: 'Scale on compute time when deciding what hides a collective.',
    cost: 'raising it: assumes more hiding, may leave comm exposed in reality',
    torch: `${AB}(compute_overlap_multipler=…)`,
  },
  'autobucketing.max_memory_increase_gb': {
    does: 'Peak memory may grow over the original order by this much (GiB) …',
    cost: 'raising it: more prefetch, higher peak',
    torch: `${AB}(max_memory_increase_gb=…)`,
  },
  'autobucketing.max_memory_increase_ratio': {
    does: '… or by this fraction of the original peak, whichever is larger.',
    cost: 'raising it: more prefetch, higher peak',
    torch: `${AB}(max_memory_increase_ratio=…)`,
  },
  'autobucketing.bucket_exposed_first': {
    does: 'Bucket the least hidden collectives first (they gain most).',
    torch: `${AB}(bucket_exposed_first=…)`,
  },
  'autobucketing.collective_bucketing': {
    does: 'Merge collectives into buckets after scheduling.',
    cost: 'off: one launch per parameter',
    torch: `${AB}(collective_bucketing=…)`,
  },
  'autobucketing.assume_bucketing_reduces_latency': {
    does: 'A collective started while a same-kind one is in flight pays no extra latency.',
    torch: 'test_configs.assume_bucketing_reduces_latency',
  },
  'autobucketing.prioritize_bucketing_during_scheduling': {
    does: 'Start same-bucket collectives together while scheduling, so they can merge.',
    cost: 'on: fewer launches, sometimes a later start for one of them',
    torch: `${AB}(prioritize_bucketing_during_scheduling=…)`,
  },
  'autobucketing.max_off_bucket_gb': {
    does: 'Off-path collectives (backward reduce-scatters) wait until this many GiB of one kind are ready, then go '
      + 'together (0: off).',
    cost: 'raising it: bigger reduce-scatter buckets, gradients held longer (memory)',
    torch: `${AB}(max_off_bucket_gb=…)`,
  },
  'autobucketing.bucket_only_internode_comms': {
    does: 'Bucket only the process groups that cross nodes (the FSDP all-gathers).',
    torch: `${AB}(bucket_only_internode_comms=…)`,
  },
  'autobucketing.max_bucket_memory_gb': {
    does: 'Byte cap of one bucket (GiB, inputs + outputs).',
    cost: 'raising it: fewer, bigger launches; more memory per bucket',
    torch: 'OverlapPreservingBucketer(max_bucket_memory_gb=…)',
  },
  'autobucketing.pre_bucketing_fsdp_collectives': {
    does: 'torch 2.13: before scheduling, merge neighbouring FSDP all-gathers (and reduce-scatters) into '
      + 'buckets big enough to saturate the link.',
    cost: 'on: fewer launches, a layer\'s weights may arrive with the next layer\'s',
    torch: `${AB}(pre_bucketing_fsdp_collectives=…)`,
  },
  'autobucketing.pre_bucketing_fsdp_collectives_bucket_cap_mb': {
    does: 'Pre-bucket cap in MB; 0 lets torch size it from the link (its saturation model).',
    torch: `${AB}(pre_bucketing_fsdp_collectives_bucket_cap_mb=…)`,
  },
  'autobucketing.pre_bucketing_fsdp_collectives_min_bucket_cap_mb': {
    does: 'Smallest pre-bucket cap torch computes (MB).',
    torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_min_bucket_cap_mb=…',
  },
  'autobucketing.pre_bucketing_fsdp_collectives_max_bucket_cap_mb': {
    does: 'Largest pre-bucket cap torch computes (MB).',
    torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_max_bucket_cap_mb=…',
  },
  'autobucketing.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier': {
    does: 'Scale on the link-saturation size before it is clipped to the cap range.',
    torch: 'aten_distributed_optimizations.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier=…',
  },
  'autobucketing.nccl_gpu_type': {
    does: 'GPU generation torch detects: picks its NCCL tables and NVLink / InfiniBand profiles for the '
      + 'pre-bucket cap and the merged collectives\' estimates.',
    torch: 'what comm_analysis.get_gpu_type() returns (nccl_gpu_type=…)',
  },
  'autobucketing.nccl_gpus_per_node': {
    does: 'GPUs per node torch assumes when it decides whether a group stays on NVLink.',
    torch: 'torch.cuda.device_count(), 8 without CUDA (nccl_gpus_per_node=…)',
  },
  'autobucketing.bucket_mode': {
    does: 'How torch merges a bucket. default: copy the members into one buffer, one collective, copy out. '
      + 'coalesced: reduce-scatters go as one NCCL group call over the members\' own tensors, no copies '
      + '(all-gathers merge as in default); a coalesced pre-bucket is not bucketed again.',
    cost: 'coalesced: no copy-in / copy-out time or buffer, but the copies no longer hide communication',
    torch: `${AB}(bucket_mode=…)`,
  },
  'autobucketing.guard_nested_waits': {
    does: 'torch 2.15: while a wait\'s exposed time prefetches another group\'s collectives, a wait handled '
      + 'inside that does not hide the outer collective. Off: torch 2.14 and before.',
    cost: 'on: the outer collective keeps more exposed time (three process groups or more, e.g. HSDP × TP)',
    torch: "torch 2.15's OverlapScheduler.wait_starts_being_handled, not an argument " +
      '(guard_nested_waits=… picks it)',
  },
};

/** Help for a field; an autobucketing knob added later still names its torch argument. */
export function knobHelp(path: string): KnobHelp | undefined {
  const h = KNOB_HELP[path];
  if (h || !path.startsWith('autobucketing.')) return h;
  const arg = path.slice('autobucketing.'.length);
  return { does: `torch's ${arg.replace(/_/g, ' ')} setting of the overlap scheduler.`, torch: `${AB}(${arg}=…)` };
}

/** Tooltip of a config field: what it does, what raising it costs, torch's name, the allowed values. */
export function knobTooltip(path: string, allowed: string): string {
  const h = knobHelp(path);
  if (!h) return `${path}: ${allowed}`;
  const cost = h.cost ? `Cost: ${h.cost}.` : '';
  const torch = h.torch ? `torch: ${h.torch}` : '';
  return [h.does, cost, torch, `${path}: ${allowed}`].filter(Boolean).join('\n');
}

/**
 * torchtitan's command line for the backend a backend knob picks, under the config's compile mode,
 * reshard and memory policy: a line per torchtitan version (config/torchtitan_flags.ts, the table
 * `compare --json` reports too); '' for other knobs.
 */
export function backendFlagsHelp(path: string, cfg: SimConfig): string {
  if (path !== 'backendA' && path !== 'backendB') return '';
  return torchtitanFlags(cfg[path], cfg)
    .map((f) => {
      const flags = f.flags === null ? `cannot run this: ${f.why}` : f.flags || 'no compile flags (eager)';
      return `torchtitan ${f.version} (${f.experiment}): ${flags}`;
    })
    .join('\n');
}

/** Each reason code in plain words (what happened, then why), before the backend's own sentence. */
export const REASON_PLAIN: Readonly<Record<ReasonCode, string>> = {
  program_order: 'Left where the program put it: gathered right before use and waited on at once.',
  prefetched: 'Started early, so it runs while earlier layers compute.',
  not_prefetched_in_flight_budget: 'Not started early: too many bytes were already in flight (max_in_flight_gb).',
  not_prefetched_memory_budget: 'Not started early: it would have raised peak memory beyond the allowed increase.',
  not_prefetched_compute_distance:
    'Not started earlier: its use is too many compute nodes away (max_compute_pre_fetch).',
  not_prefetched_coll_distance: 'Not started earlier: too many collectives come before it (max_coll_distance).',
  not_prefetched_depends_on_compute: 'Cannot start earlier: its input is made by compute that has not run yet.',
  not_prefetched_no_compute: 'Nothing to hide behind: no compute is left to run before it is needed.',
  exposed: 'Partly exposed: its wait came before enough compute had run to hide it.',
  bucketed: 'Merged with neighbours into one launch (a bucket), saving launch latency.',
  not_bucketed_path_between_starts:
    'Kept separate: one of them needs the other\'s result first, so they cannot start together.',
  not_bucketed_hiding_compute_not_between: 'Kept separate: merging would move it away from the compute that hides it.',
  not_bucketed_byte_cap: 'Kept separate: the bucket would exceed its byte cap (max_bucket_memory_gb).',
  not_bucketed_key_mismatch: 'Kept separate: different kind, group or dtype cannot share a launch.',
  not_bucketed_would_expose: 'Kept separate: merging would leave communication exposed that is hidden now.',
  block_bucket: 'Bucketed by hand: one bucket per transformer block.',
  block_prefetch: 'Prefetched by hand: one block ahead.',
};

export function plainReason(code: string): string {
  return (REASON_PLAIN as Record<string, string>)[code] ?? code.replace(/_/g, ' ');
}
