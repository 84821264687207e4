// The knob table: one row per SimConfig leaf, each knob declared once — path (its name), type,
// range or choices, default (and `train`'s where it differs on purpose), help, torch's name, CLI
// flag. DEFAULT_CONFIG, validation, the URL codec, the CLI flags and their help, the config panel
// and the glossary's knob help all read these rows. Backend knobs are the backend's own rows
// (backends/autobucketing/options.ts), live-run choices the runtime's (runtime/index_options.ts);
// this table derives its rows from theirs. A new knob: a SimConfig field and one row here
// (docs/ARCHITECTURE.md §4).

import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, BACKEND_NAMES, type KnobHelp, type KnobSpec } from '../backends';
import { HARDWARE_NAMES, NETWORK_NAMES } from '../estimate';
import {
  COMPILE_MODES,
  EP_CHUNK_DIMS,
  EP_CHUNK_STRATEGIES,
  EP_MODULE_FQNS,
  MEMORY_POLICIES,
  RESHARD_POLICIES,
} from '../graph';
import { AC_MODES, MODEL_NAMES, TRAIN_COMPILE_LOSS } from '../model';
import {
  COLLECTIVE_ALGORITHMS,
  KERNEL_CHOICES,
  MAX_LIVE_STEPS,
  MAX_SEED,
  TIMING_MODES,
} from '../runtime/index_options';
import { COMM_DTYPES, type FieldAbout, type FieldRule, type FieldSpec } from './fields';
import type { ConfigPath, ConfigValue } from './schema';

export const MAX_RANKS = 1024;
const MAX_TOKENS_DIM = 1 << 20;
const CUDA_GRAPHS = ['on', 'off'] as const;
const COMPILE_LOSS = ['on', 'off'] as const;
/** torchtitan's name for the backend knobs; the command line itself follows, by version (backendFlagsHelp). */
const BACKEND_FLAG = 'compile.backend and its passes, as below for each torchtitan version';

/** A row, its default checked against SimConfig's type at `path` by the compiler. */
const knob = <P extends ConfigPath>(path: P, row: FieldRule & FieldAbout<ConfigValue<P>>) =>
  ({ ...row, path }) as FieldSpec & { readonly path: P };

type BackendKnob = keyof typeof AUTOBUCKETING_KNOBS;

/** A backend knob's row as a config field: its range, integer-ness and help; its default the default profile's. */
function backendField(key: BackendKnob): FieldSpec & { readonly path: `autobucketing.${string}` } {
  const spec: KnobSpec & { readonly help: KnobHelp } = AUTOBUCKETING_KNOBS[key];
  // torch's knob name is the label
  const about = { label: key, group: 'autobucketing', default: AUTOBUCKETING_DEFAULTS[key], help: spec.help } as const;
  const path = `autobucketing.${key}` as const;
  if (spec.type === 'boolean') return { ...about, path, kind: 'bool' };
  if (spec.type === 'enum') return { ...about, path, kind: 'enum', values: spec.values };
  return { ...about, path, kind: spec.integer ? 'int' : 'number', min: spec.min, max: spec.max };
}

const backendFields = () => (Object.keys(AUTOBUCKETING_KNOBS) as BackendKnob[]).map(backendField);

// graph_trainer's EP overlap (torchtitan configs.py EpOverlapConfig; config/graph_trainer_passes.ts
// says where it runs and what it refuses). disable_early_grad_accumulation has no row: it moves the
// gradients' add across views only (ep_chunk_pass.py), which the simulator times the same.
const EP_OVERLAP_ROWS = [
  knob('epOverlap.enabled', {
    label: 'compile.ep_overlap.enabled',
    group: 'backends',
    kind: 'bool',
    default: false,
    help: {
      does:
        'aot_fx_trace, ep > 1: run each selected MoE region as two chunks of the tokens, scheduled so one ' +
        "chunk computes while the other's dispatch / combine all-to-alls run.",
      cost: 'smaller kernels (each on half the tokens), one more counts all-to-all per region, cat / add at its edges',
      torch: 'compile.ep_overlap.enabled',
    },
  }),
  knob('epOverlap.chunkDim', {
    label: 'compile.ep_overlap.chunk_dim',
    group: 'backends',
    kind: 'enum',
    values: EP_CHUNK_DIMS,
    default: 'batch',
    help: {
      does: 'Which token dim the two chunks split: batch, or seq (MoE roots only: attention needs the full K/V).',
      cost: 'seq: the split copies its halves contiguous',
      torch: 'compile.ep_overlap.chunk_dim',
    },
  }),
  knob('epOverlap.strategy', {
    label: 'compile.ep_overlap.strategy',
    group: 'backends',
    kind: 'enum',
    values: EP_CHUNK_STRATEGIES,
    default: 'graph',
    help: {
      does:
        'eager: wrap the module forwards before tracing; graph: chunk the traced graph. The same two chunks ' +
        'and schedule here; graph refuses tensor parallel.',
      torch: 'compile.ep_overlap.strategy',
    },
  }),
  knob('epOverlap.moduleFqn', {
    label: 'compile.ep_overlap.module_fqn',
    group: 'backends',
    kind: 'enum',
    values: EP_MODULE_FQNS,
    default: 'layers.*',
    help: {
      does:
        'The regions chunked: each MoE transformer block (layers.*: attention too) or each MoE module ' +
        '(layers.*.moe, whose first dispatch pair goes out together).',
      torch: 'compile.ep_overlap.module_fqn',
    },
  }),
] as const;

/** Model and cluster shape, network, backends: the rows before the backend knobs. */
const CLUSTER_ROWS = [
  knob('model', {
    label: 'model preset',
    group: 'cluster',
    kind: 'enum',
    values: MODEL_NAMES,
    default: 'tiny',
    flag: 'model',
    graphShape: true,
    help: {
      does: 'Model size (torchtitan llama3 flavors; tiny is the one live runs train).',
      cost: 'bigger: more compute and more bytes per collective',
    },
  }),
  knob('ranks', {
    label: 'ranks',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
    default: 4,
    flag: 'ranks',
    graphShape: true,
    help: {
      does: 'Number of GPUs the model is sharded over.',
      cost: 'more: smaller shards, but every collective has more ring steps (latency)',
      torch: 'world_size',
    },
  }),
  knob('localBatch', {
    label: 'local batch',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: 4096,
    nullable: true,
    default: null,
    flag: 'batch',
    graphShape: true,
    help: {
      does: "Sequences per rank per step (empty: the preset's).",
      cost: 'more: longer compute that hides comm better, more activation memory',
      torch: 'training.local_batch_size',
    },
  }),
  knob('seqLen', {
    label: 'seq len',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_TOKENS_DIM,
    nullable: true,
    default: null,
    flag: 'seq-len',
    graphShape: true,
    help: {
      does: "Tokens per sequence (empty: the preset's).",
      cost: 'more: longer compute, more activation memory',
      torch: 'training.seq_len',
    },
  }),
  knob('hardware', {
    label: 'hardware',
    group: 'cluster',
    kind: 'enum',
    values: HARDWARE_NAMES,
    default: 'h100',
    flag: 'hardware',
    help: { does: 'GPU model: sets matmul speed and HBM size.' },
  }),
  knob('network', {
    label: 'network preset',
    group: 'network',
    kind: 'enum',
    values: NETWORK_NAMES,
    default: 'nvlink-ib',
    flag: 'network',
    help: { does: 'Interconnect preset (latency α and bandwidth β of the links).' },
  }),
  // 10 MB/s floor: below it a step takes years and the times overflow to Infinity
  knob('bandwidthGBps', {
    label: 'bandwidth (GB/s)',
    group: 'network',
    kind: 'number',
    min: 0.01,
    max: 100_000,
    nullable: true,
    default: null,
    flag: 'bandwidth-gbps',
    help: {
      does: "Override the network bandwidth (GB/s; empty: the preset's).",
      cost: 'lower: every collective takes longer, more of it is exposed',
    },
  }),
  knob('latencyUs', {
    label: 'latency α (µs)',
    group: 'network',
    kind: 'number',
    min: 0,
    max: 1e6,
    nullable: true,
    default: null,
    flag: 'latency-us',
    help: {
      does: "Override the per-step latency α (µs; empty: the preset's).",
      cost: 'higher: many small collectives hurt; bucketing helps more',
    },
  }),
  knob('backendA', {
    label: 'backend A',
    group: 'backends',
    kind: 'enum',
    values: BACKEND_NAMES,
    default: 'aot_eager',
    help: { does: 'The backend timeline A runs.', torch: BACKEND_FLAG },
  }),
  knob('backendB', {
    label: 'backend B',
    group: 'backends',
    kind: 'enum',
    values: BACKEND_NAMES,
    default: 'aot_eager_autobucketing',
    help: { does: 'The backend timeline B runs.', torch: BACKEND_FLAG },
  }),
] as const;

/** Precision, activation checkpointing, noise and the straggler. */
const PRECISION_ROWS = [
  // SimpleFSDP mixed precision: parameters gathered in bf16, gradients reduced in fp32
  knob('paramDtype', {
    label: 'param dtype',
    group: 'precision',
    kind: 'enum',
    values: COMM_DTYPES,
    default: 'bf16',
    flag: 'param-dtype',
    graphShape: true,
    help: {
      does: 'Dtype parameters are all-gathered in (SimpleFSDP mixed precision).',
      cost: 'fp32: twice the all-gather bytes of bf16',
      torch: 'mixed_precision_param',
    },
  }),
  knob('reduceDtype', {
    label: 'reduce dtype',
    group: 'precision',
    kind: 'enum',
    values: COMM_DTYPES,
    default: 'fp32',
    flag: 'reduce-dtype',
    graphShape: true,
    help: {
      does: 'Dtype gradients are reduce-scattered in.',
      cost: 'fp32: twice the reduce-scatter bytes of bf16, more exact sums',
      torch: 'mixed_precision_reduce',
    },
  }),
  // null: the preset's torchtitan train config ('full' for llama3-70b / 405b, 'selective' for 8b, none for tiny)
  knob('activationCheckpointing', {
    label: 'activation ckpt',
    group: 'cluster',
    kind: 'enum',
    values: AC_MODES,
    nullable: true,
    default: null,
    flag: 'ac',
    graphShape: true,
    help: {
      does: 'Drop activations in the forward and recompute them in the backward.',
      cost: 'full: least memory, ~1/3 more compute',
      torch: 'activation_checkpoint.mode',
    },
  }),
  knob('seed', {
    label: 'seed',
    group: 'precision',
    kind: 'int',
    min: 0,
    max: MAX_SEED,
    default: 0,
    flag: 'seed',
    help: { does: 'Seed for jitter and live-run data: same seed, same result.' },
  }),
  knob('jitterPct', {
    label: 'jitter (± %)',
    group: 'precision',
    kind: 'number',
    min: 0,
    max: 50,
    default: 0,
    flag: 'jitter-pct',
    help: {
      does: "Random ± % noise on each rank's op times, as real GPUs drift.",
      cost: 'more: ranks fall out of step; without alignment they may choose different buckets',
    },
  }),
  // torch aligns estimates across ranks by default in the autobucketing pass
  knob('alignment', {
    label: 'cross-rank alignment',
    group: 'precision',
    kind: 'bool',
    default: true,
    flag: 'alignment',
    flagWords: { on: 'true', off: 'false' },
    help: {
      does: 'Ranks agree on one set of cost estimates before scheduling, so every rank picks the same buckets.',
      cost: 'off with jitter: ranks may disagree and the step hangs',
    },
  }),
  knob('straggler.rank', {
    label: 'straggler rank',
    group: 'precision',
    kind: 'int',
    min: 0,
    max: MAX_RANKS - 1,
    nullable: true,
    default: null,
    flag: 'straggler-rank',
    help: {
      does: 'One rank made slower than the rest (empty: none).',
      cost: "every collective waits for it: the others' waits grow",
    },
  }),
  knob('straggler.factor', {
    label: 'straggler factor',
    group: 'precision',
    kind: 'number',
    min: 1,
    max: 100,
    default: 1.5,
    flag: 'straggler-factor',
    help: { does: "How much slower the straggler's compute is (×)." },
  }),
] as const;

/**
 * The live run's options: the runtime's choices and ranges. The app's run is short and tries
 * WebGPU; `fsdp-sim train` defaults to a loss curve's length on the CPU reference, the same
 * numbers on every machine.
 */
const LIVE_ROWS = [
  knob('live.kernels', {
    label: 'kernels',
    group: 'live',
    kind: 'enum',
    values: KERNEL_CHOICES,
    default: 'auto',
    trainDefault: 'cpu',
    help: { does: 'Live run kernels: WebGPU (WGSL shaders), CPU, or auto (WebGPU where an adapter exists).' },
  }),
  knob('live.collectiveAlgorithm', {
    label: 'collective',
    group: 'live',
    kind: 'enum',
    values: COLLECTIVE_ALGORITHMS,
    default: 'direct',
    help: {
      does: 'Live run collective: direct (each rank reads every shard) or ring (neighbour to neighbour, as NCCL).',
    },
  }),
  knob('live.steps', {
    label: 'steps',
    group: 'live',
    kind: 'int',
    min: 1,
    max: MAX_LIVE_STEPS,
    default: 10,
    trainDefault: 50,
    help: { does: 'Training steps a live run takes.' },
  }),
  knob('live.timing', {
    label: 'timing',
    group: 'live',
    kind: 'enum',
    values: TIMING_MODES,
    default: 'preset',
    help: {
      does:
        "Live timeline clock: preset replays the cost model's times for the live schedule; measured shows the " +
        "browser's real time.",
    },
  }),
] as const;

/** The mesh (torchtitan's names) and the compile knobs. */
const MESH_ROWS = [
  // -1 = the ranks the other degrees leave (crossCheck rejects 0 and a bad product); FSDP on every rank by default
  knob('parallelism.data_parallel_shard_degree', {
    label: 'dp_shard (FSDP)',
    group: 'cluster',
    kind: 'int',
    min: -1,
    max: MAX_RANKS,
    default: -1,
    flag: 'dp-shard',
    graphShape: true,
    help: {
      does: 'FSDP degree: ranks each parameter is sharded over (-1: the ranks TP and HSDP leave).',
      cost: 'more: smaller shards, more ring steps per all-gather',
      torch: 'parallelism.data_parallel_shard_degree',
    },
  }),
  knob('parallelism.data_parallel_replicate_degree', {
    label: 'dp_replicate (HSDP)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
    default: 1,
    flag: 'dp-replicate',
    graphShape: true,
    help: {
      does: 'HSDP: copies of the FSDP group; their gradient shards are all-reduced.',
      cost: 'more: an all-reduce per gradient, shards over fewer ranks (more memory)',
      torch: 'parallelism.data_parallel_replicate_degree',
    },
  }),
  knob('parallelism.tensor_parallel_degree', {
    label: 'tp (tensor parallel)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
    default: 1,
    flag: 'tp',
    graphShape: true,
    help: {
      does: 'Tensor parallel (with sequence parallel): ranks that split every linear and share one batch.',
      cost: 'more: less memory per rank, activation collectives on the critical path',
      torch: 'parallelism.tensor_parallel_degree',
    },
  }),
  knob('parallelism.gpus_per_node', {
    label: 'GPUs per node',
    group: 'network',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
    default: 8,
    flag: 'gpus-per-node',
    help: { does: 'GPUs per node: a process group inside a node runs on NVLink, one spanning nodes on IB.' },
  }),
  // torchtitan's default: no expert parallel (a dense model refuses more; parallelism.ts says why)
  knob('parallelism.expert_parallel_degree', {
    label: 'ep (expert parallel)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
    default: 1,
    flag: 'ep',
    graphShape: true,
    help: {
      does:
        'Expert parallel (MoE models): ranks the routed experts are split across; tokens travel to their ' +
        'experts and back by all-to-all.',
      cost: 'more: fewer experts per rank (less memory), an all-to-all pair per MoE block on the critical path',
      torch: 'parallelism.expert_parallel_degree',
    },
  }),
  knob('moeLoadImbalance', {
    label: 'MoE load imbalance',
    group: 'cluster',
    kind: 'number',
    min: 1,
    max: MAX_RANKS,
    default: 1,
    flag: 'moe-load-imbalance',
    graphShape: true,
    help: {
      does:
        'MoE routing: how many times its balanced share of tokens the busiest expert-parallel rank receives ' +
        '(capped at ep: every routed token; 1: balanced).',
      cost: 'more: larger all-to-alls and grouped GEMMs on the busiest rank, which every rank waits for',
    },
  }),
  // torch before pytorch PR #169404 (Dec 2025); off: torch 2.13, where the batch-1 all-gather needs no copy
  knob('seqParallelGatherCopy', {
    label: 'SP all-gather copy (older torch)',
    group: 'cluster',
    kind: 'bool',
    default: false,
    help: {
      does:
        "Older torch (before pytorch PR #169404, Dec 2025): copy every sequence-parallel all-gather's output " +
        '(torch.cat of its chunks). Off: torch 2.13, where it is a view.',
      cost: 'on: one activation copy per TP all-gather on the critical path',
    },
  }),
  knob('reshardAfterForward', {
    label: 'fsdp_reshard_after_forward',
    group: 'cluster',
    kind: 'enum',
    values: RESHARD_POLICIES,
    default: 'default',
    help: {
      does:
        'Whether each parameter is all-gathered again for the backward (default and always: yes, no pipeline ' +
        "parallel here) or the forward's gathered copy is kept until its last backward use (never).",
      cost: 'never: no backward all-gathers, every gathered parameter stays in memory through the step',
      torch: 'parallelism.fsdp_reshard_after_forward',
    },
  }),
  // fsdp-sim's numbers so far: SimpleFSDP's torch.compile path
  knob('compileMode', {
    label: 'compile.mode',
    group: 'backends',
    kind: 'enum',
    values: COMPILE_MODES,
    default: 'jit',
    help: {
      does:
        'jit: torch.compile splits a forward and a backward graph, each passed on its own. aot_fx_trace ' +
        '(graph_trainer): one forward-loss-backward graph, passed once.',
      torch: 'compile.mode',
    },
  }),
  knob('memoryPolicy', {
    label: 'compile.memory_policy',
    group: 'backends',
    kind: 'enum',
    values: MEMORY_POLICIES,
    default: 'default',
    help: {
      does:
        'What an aot_fx_trace graph recomputes in the backward: default (mm, SDPA, reduce-scatter saved), full, ' +
        'eager (every second mm recomputed), sac_and_offload (default, the saved activations of all blocks but the ' +
        'last copied to host memory and back on their own stream) or none (graph_trainer before the flag). jit ' +
        'reads activation ckpt instead.',
      cost: "none: no recompute, most activation memory; sac_and_offload: host copies, exposed past a layer's time",
      torch: 'compile.memory_policy',
    },
  }),
  // null: the mode's default (config/graph_trainer_passes.ts): on under aot_fx_trace, off under jit
  knob('cudaGraphs', {
    label: 'cudagraph_pass',
    group: 'backends',
    kind: 'enum',
    values: CUDA_GRAPHS,
    nullable: true,
    default: null,
    help: {
      does:
        "Replay the step as one CUDA graph (graph_trainer's cudagraph_pass): each kernel skips the host launch, " +
        '4 → 0.875 µs. Default: on under aot_fx_trace, off under jit.',
      cost: 'off: every kernel pays the eager launch',
      torch: 'on by default in aot_fx_trace; off: --compile.disable_passes cudagraph_pass',
    },
  }),
  knob('fsdpAgRsOverlap', {
    label: 'compile.enable_fsdp_ag_rs_overlap',
    group: 'backends',
    kind: 'bool',
    default: false,
    help: {
      does:
        'aot_fx_trace: FSDP all-gathers on a second process group (its own NCCL stream), so backward ' +
        'all-gathers run beside the reduce-scatters instead of after them.',
      cost: 'the two share the links: the simulator does not slow either',
      torch: 'compile.enable_fsdp_ag_rs_overlap',
    },
  }),
  knob('fsdpDenseRegionOverlap', {
    label: 'compile.enable_fsdp_dense_region_overlap',
    group: 'backends',
    kind: 'bool',
    default: false,
    help: {
      does:
        'aot_fx_trace, transformer_block: FSDP collectives launched in the neighbouring dense (attention) ' +
        'regions; in a dense model that leaves the launches and sinks the reduce-scatter waits to the end.',
      cost: 'reduce-scatter buffers live until the end of the backward',
      torch: 'compile.enable_fsdp_dense_region_overlap',
    },
  }),
  ...EP_OVERLAP_ROWS,
  // null: the preset's torchtitan train config (model TRAIN_COMPILE_LOSS)
  knob('compileLoss', {
    label: 'compile loss',
    group: 'backends',
    kind: 'enum',
    values: COMPILE_LOSS,
    nullable: true,
    default: null,
    flag: 'compile-loss',
    graphShape: true,
    help: {
      does:
        'torch.compile the loss with inductor: it fuses the fp32 upcast, log_softmax and nll_loss, so no fp32 ' +
        "[tokens, vocab] tensor is allocated and the backward writes the logits' gradient directly. A loss " +
        "compiled with compile.backend aot_eager runs the eager ops: off. Default: the preset's train config " +
        `(on for ${MODEL_NAMES.filter((m) => TRAIN_COMPILE_LOSS[m]).join(', ')}).`,
      cost: 'off: four fp32 [tokens, vocab] tensors at the loss (18 + 22 bytes per logit of HBM traffic)',
      torch: 'compile.enable with compile.components containing "loss"',
    },
  }),
] as const;

type Rows = readonly (FieldSpec & { readonly path: string })[];
/** The SimConfig leaves that have no row among R: a compile error names them. */
type Undeclared<R extends Rows> = Exclude<ConfigPath, R[number]['path']>;

/** The rows, in panel and URL order; refused by the compiler while a SimConfig leaf has no row. */
function everyLeaf<const R extends Rows>(rows: R & ([Undeclared<R>] extends [never] ? unknown : Undeclared<R>)) {
  return rows as Rows as readonly FieldSpec[];
}

export const CONFIG_FIELDS: readonly FieldSpec[] = everyLeaf([
  ...CLUSTER_ROWS,
  ...backendFields(),
  ...PRECISION_ROWS,
  ...LIVE_ROWS,
  ...MESH_ROWS,
]);

/** Groups: the nested objects of SimConfig (the first part of a dotted path). */
export const CONFIG_GROUPS: readonly string[] = [
  ...new Set(CONFIG_FIELDS.filter((f) => f.path.includes('.')).map((f) => f.path.split('.')[0])),
];
