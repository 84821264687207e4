// Plain words for the app's vocabulary: the glossary's terms, the knob tooltips (each knob's help
// is declared in its row of the config's field table, with its range and default), and each
// backend reason code in plain language. One table per concept so the legend, the column heads,
// the knob tooltips and the explain panel all say the same thing.

import { fieldSpec, torchtitanFlags, type KnobHelp, type SimConfig } from '../config';
import type { ReasonCode } from '../store';

export interface Term {
  readonly id: string;
  readonly term: string;
  readonly text: string;
}

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
    id: 'fsdp',
    term: 'FSDP',
    text:
      'Fully Sharded Data Parallel: every rank (GPU) trains on its own slice of the batch, but keeps only a 1/N ' +
      'slice of each parameter, so N ranks hold one copy of the model between them instead of N copies.',
  },
  {
    id: 'shard',
    term: 'shard',
    text: 'The 1/N slice of a parameter a rank keeps between uses (SimpleFSDP splits on dim 0).',
  },
  {
    id: 'all_gather',
    term: 'all-gather',
    text:
      "A collective that collects every rank's shard so each rank briefly holds the whole parameter, right " +
      'before a layer needs it. It moves (N−1)/N of the parameter over the network.',
  },
  {
    id: 'reduce_scatter',
    term: 'reduce-scatter',
    text:
      "The backward's collective: sums one parameter's gradient over all ranks and leaves each rank only its " +
      'own shard of the sum.',
  },
  {
    id: 'other_collectives',
    term: 'other collectives',
    text:
      "Collectives of imported traces beyond FSDP's two: all-reduce (loss, gradient norm), send/recv, " +
      'broadcast. HTA counts every one of them as communication.',
  },
  {
    id: 'all_to_all',
    term: 'all-to-all',
    text:
      'A collective where every rank of a group sends a different slice to every other rank: with expert ' +
      'parallel, each MoE block sends every token row to the rank holding its chosen expert (dispatch) and back ' +
      "(combine). Its input is the router's output, computed just before it, so torch's overlap pass cannot " +
      'start it early, and it never buckets one: it mostly stays exposed.',
  },
  {
    id: 'expert_parallel',
    term: 'expert parallel',
    text:
      'Splitting the routed experts of an MoE model over the ranks of the ep group (ep consecutive ranks), ' +
      'each holding E/ep experts whole; tokens travel to their experts and back by all-to-all. The timeline draws ' +
      'an ep lane per rank for those all-to-alls.',
  },
  {
    id: 'efsdp',
    term: 'efsdp',
    text:
      "The FSDP group of the experts' weights under expert parallel (dp_shard × tp / ep ranks, torchtitan's " +
      'dp_shard_mod_ep): they are all-gathered and their gradients reduce-scattered there, on a lane of their ' +
      "own, apart from the dense weights' dp lane.",
  },
  {
    id: 'router',
    term: 'router',
    text:
      "The MoE block's gate: a linear layer scoring each token against every expert, then a softmax top-k that " +
      'picks the k experts each token goes to. Its output decides what the dispatch all-to-all sends.',
  },
  {
    id: 'grouped_gemm',
    term: 'grouped GEMM',
    text:
      "One kernel running a matmul per expert over that expert's tokens (the routed experts' w1, w3, w2): " +
      'its work grows with the tokens routed to the busiest rank (moeLoadImbalance).',
  },
  {
    id: 'wait',
    term: 'wait',
    text:
      'The point where compute must stop until a collective has finished. The part of a wait while the ' +
      'collective runs is drawn red: exposed communication, as Metrics count it. The part before it starts ' +
      '(a peer has not issued it yet) is a wait for a late peer, counted as idle.',
  },
  {
    id: 'peer_wait',
    term: 'wait for a late peer',
    text:
      'The part of a wait before its collective starts: this rank has issued it, but another rank of the group ' +
      'has not (a straggler, a slower plan). No kernel runs, so Metrics count it as idle, not as exposed ' +
      'communication; the timeline draws it in its own colour.',
  },
  {
    id: 'exposed',
    term: 'exposed communication',
    text:
      'Communication time no compute runs under: the GPU waits for the network. Lower is better; it adds ' +
      'straight onto the step time.',
  },
  {
    id: 'overlap',
    term: 'overlap',
    text:
      "The share of communication time hidden under compute (HTA's comm/compute overlap). 100 % means the " +
      'network never made the GPU wait. Over ranks it is pooled: Σ overlap / Σ communication time.',
  },
  {
    id: 'prefetch',
    term: 'prefetch',
    text:
      'Starting an all-gather early, several layers before its parameter is used, so it runs while earlier ' +
      'layers compute. It costs memory: the gathered parameter lives longer.',
  },
  {
    id: 'bucket',
    term: 'bucket',
    text:
      'Several small collectives merged into one launch. Each launch pays a fixed latency (α), so one bucket of ' +
      'ten is cheaper than ten launches, if the merge does not delay anyone.',
  },
  {
    id: 'step',
    term: 'step time',
    text:
      'Wall time of one training step (forward, backward, optimizer), spanned over ranks: from the first ' +
      'kernel start on any rank to the last kernel end on any rank, so the slowest rank sets it. A step that ' +
      'hangs has none.',
  },
  {
    id: 'peak',
    term: MEMORY_NAMES.live,
    text:
      'The most bytes of live tensors one rank holds at once during the step (shards, optimizer state, gathered ' +
      "parameters, activations, gradients), by the tensors' lifetimes in the graph: what torch's overlap pass " +
      'estimates its memory with. The maximum over ranks; no allocator rounding, and not the tensors a graph op ' +
      'hides (the fp32 logits of the loss).',
  },
  {
    id: 'peak_allocated',
    term: MEMORY_NAMES.allocated,
    text:
      'torch.cuda.max_memory_allocated: the most bytes live tensors hold at once, in the CUDA caching ' +
      "allocator's 512-byte blocks, including what the step allocates beyond the graph (the fp32 logits and " +
      "their gradient). Of rank 0's schedule, over the whole step.",
  },
  {
    id: 'peak_reserved',
    term: MEMORY_NAMES.reserved,
    text:
      'torch.cuda.max_memory_reserved: the memory the caching allocator holds from the GPU at most: ' +
      'allocated blocks plus the free space in its segments (rounding, a pool per stream, fragmentation). ' +
      'What torchtitan logs as "memory:", and what must fit in HBM. Of rank 0\'s schedule, over the whole step.',
  },
  {
    id: 'idle',
    term: 'idle',
    text:
      "Time no kernel runs on the GPU at all: no compute, no collective, no copy (HTA's idle time), such as a " +
      'wait for a late peer. A compute stream waiting on a running collective is not idle: that time is exposed ' +
      'communication.',
  },
  {
    id: 'compute',
    term: 'compute',
    text:
      "A kernel on the GPU's compute stream: matmul, attention, norm, the optimizer (in a live run also " +
      "'drain': queued kernels finishing before a readback).",
  },
  {
    id: 'memcpy',
    term: 'memcpy / sync',
    text:
      'Copies, memsets and CUDA syncs of imported traces: GPU time that is neither compute nor a collective ' +
      '(HTA counts it as non-compute, not idle).',
  },
  {
    id: 'readback',
    term: 'readback',
    text:
      "Live run, measured clock: a rank copying a tensor from the GPU to the host (a loss, a collective's " +
      'input). Counted as memory-copy time.',
  },
  {
    id: 'upload',
    term: 'upload',
    text:
      "Live run, measured clock: a rank copying data from the host to the GPU (a batch, a collective's " +
      'result). Counted as memory-copy time.',
  },
  {
    id: 'barrier',
    term: 'barrier wait',
    text:
      "Live run, measured clock: a rank waiting for the other ranks at a collective's barrier. Counted as " +
      'sync time.',
  },
  {
    id: 'rank',
    term: 'rank',
    text: 'One GPU (here: one simulated device, or one Web Worker in a live run). Rank 0 … N−1.',
  },
  {
    id: 'backend',
    term: 'backend',
    text:
      'The torch.compile backend that orders the step: aot_eager keeps the program order; ' +
      'aot_eager_autobucketing reorders collectives (prefetch) and merges them (buckets); transformer_block is the ' +
      'hand-written one-bucket-per-block plan.',
  },
  {
    id: 'clock',
    term: 'clock',
    text:
      "Where a timeline's times come from: the cost model (simulated µs for the chosen GPU and network), a " +
      "live run (your browser's real time, or the cost model replayed), or an imported trace. Numbers from " +
      'different clocks are not comparable.',
  },
  {
    id: 'kernels',
    term: 'kernels (live)',
    text:
      "What computes a live run's nodes: WebGPU (WGSL shaders on this browser's GPU, one device per rank " +
      "worker) or CPU (the reference kernels, in each worker). 'auto' tries WebGPU and falls back to CPU when " +
      'the browser gives no WebGPU device; the headline names the kernels a run actually used.',
  },
];

export function termById(id: string): Term {
  const t = TERMS.find((x) => x.id === id);
  if (!t) throw new Error(`glossary has no term '${id}'; known: ${TERMS.map((x) => x.id).join(', ')}`);
  return t;
}

/** What a knob does and what raising it costs, with torch's name: the help in its row (config's CONFIG_FIELDS). */
export function knobHelp(path: string): KnobHelp | undefined {
  return fieldSpec(path)?.help;
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
    "Kept separate: one of them needs the other's result first, so they cannot start together.",
  not_bucketed_hiding_compute_not_between: 'Kept separate: merging would move it away from the compute that hides it.',
  not_bucketed_byte_cap: 'Kept separate: the bucket would exceed its byte cap (max_bucket_memory_gb).',
  not_bucketed_key_mismatch: 'Kept separate: different kind, group or dtype cannot share a launch.',
  not_bucketed_would_expose: 'Kept separate: merging would leave communication exposed that is hidden now.',
  block_bucket: "Bucketed by the module plan (torch's manual scheduler): one bucket per plan entry, e.g. a block.",
  block_prefetch: 'Prefetched by the module plan: started while the previous plan entry computes.',
};

export function plainReason(code: string): string {
  return (REASON_PLAIN as Record<string, string>)[code] ?? code.replace(/_/g, ' ');
}
