// SimConfig: every knob the UI, the URL and the CLI share, with its default. Field names follow
// torchtitan / torch where one exists (`compile.model_backend_override` → backendA/backendB,
// the autobucketing knobs verbatim from torch._inductor.config.aten_distributed_optimizations).

import { AUTOBUCKETING_DEFAULTS } from '../backends';
import type { BackendName } from '../backends';
import type { HardwareName, NetworkName } from '../estimate';
import type { CompileMode, MemoryPolicy, ReshardPolicy } from '../graph';
import type { ActivationCheckpointing, ModelName } from '../model';
import { PARALLELISM_DEFAULTS, type ParallelismConfig } from './parallelism';

/** Float dtypes parameters / gradients may be communicated in. */
type CommDtype = 'bf16' | 'fp32' | 'fp16';

/** Autobucketing (overlap scheduler + bucketer) knobs: torch's names, the default profile's values. */
type AutobucketingKnobs = {
  -readonly [K in keyof typeof AUTOBUCKETING_DEFAULTS]: (typeof AUTOBUCKETING_DEFAULTS)[K];
};

interface StragglerConfig {
  /** The slow rank, or null for none. Must be < ranks. */
  rank: number | null;
  /** Every time on the slow rank × factor (1.5 → 50 % slower). */
  factor: number;
}

interface LiveConfig {
  /** Kernels for the live run: 'auto' tries WebGPU then falls back to the CPU reference. */
  kernels: 'auto' | 'webgpu' | 'cpu';
  /** SharedArrayBuffer collective: 'direct' (slot per rank, sum in rank order) or 'ring' (n−1 neighbour steps). */
  collectiveAlgorithm: 'direct' | 'ring';
  /** Training steps to run. */
  steps: number;
  /**
   * Virtual clock: 'preset' times compute with the hardware preset; 'measured' uses the local GPU
   * and scales the network.
   */
  timing: 'preset' | 'measured';
}

export interface SimConfig {
  /** Model preset (torchtitan flavor). */
  model: ModelName;
  /** Data-parallel ranks (the FSDP group size), 1..1024. */
  ranks: number;
  /** Local (per-rank) batch; null = the preset's (torchtitan's train config). */
  localBatch: number | null;
  /** Sequence length; null = the preset's. */
  seqLen: number | null;
  /** Accelerator preset. */
  hardware: HardwareName;
  /** Network preset (collective cost model). */
  network: NetworkName;
  /**
   * Override: ring bus bandwidth per GPU, GB/s, inside and across nodes (turns the preset into an
   * α-β ring); null = the preset's.
   */
  bandwidthGBps: number | null;
  /** Override: per-step ring latency α, µs, inside and across nodes; null = the preset's. */
  latencyUs: number | null;
  /** Left timeline's backend (`compile.model_backend_override` of run A). */
  backendA: BackendName;
  /** Right timeline's backend (run B). */
  backendB: BackendName;
  /** Knobs of aot_eager_autobucketing; torch's defaults. */
  autobucketing: AutobucketingKnobs;
  /** Dtype parameters are all-gathered in (SimpleFSDP param_dtype). */
  paramDtype: CommDtype;
  /** Dtype gradients are reduce-scattered in (reduce_dtype). */
  reduceDtype: CommDtype;
  /**
   * torchtitan `activation_checkpoint.mode` ('selective' = its op-level option). null = the
   * preset's torchtitan train config (TRAIN_AC_MODE): 'full' for llama3-70b / 405b and 'selective'
   * for llama3-8b as torchtitan's train configs run them, 'none' for tiny / small.
   */
  activationCheckpointing: ActivationCheckpointing | null;
  /** Seed of every random choice (jitter, data, init). */
  seed: number;
  /** Per-rank noise on every estimate, ± percent (0 = ranks identical). */
  jitterPct: number;
  /**
   * Cross-rank alignment of estimates (median over ranks) before the backend plans; off + jitter
   * can make ranks disagree.
   */
  alignment: boolean;
  /** One slow rank. */
  straggler: StragglerConfig;
  /** Live mode (real kernels on rank workers). */
  live: LiveConfig;
  /** The device mesh (torchtitan `parallelism.*`): FSDP × TP, HSDP; the degrees' product is ranks. */
  parallelism: ParallelismConfig;
  /**
   * Model torch before pytorch PR #169404 (Dec 2025): a copy after every sequence-parallel
   * all-gather on tp (src/graph/tp.ts). Off: torch 2.13.
   */
  seqParallelGatherCopy: boolean;
  /**
   * torchtitan `parallelism.fsdp_reshard_after_forward`: 'default' (reshard: no pipeline
   * parallel here) and 'always' gather each parameter again for the backward; 'never' keeps the
   * forward's gathered copy until its last backward use.
   */
  reshardAfterForward: ReshardPolicy;
  /**
   * graph_trainer `compile.mode`: 'jit' (torch.compile: a forward and a backward graph, each
   * passed on its own) or 'aot_fx_trace' (one traced forward-loss-backward graph, passed once).
   */
  compileMode: CompileMode;
  /**
   * graph_trainer `compile.memory_policy`, what an aot_fx_trace graph recomputes ('jit' reads
   * activationCheckpointing instead): default (graph SAC), full, eager (op SAC) or none.
   */
  memoryPolicy: MemoryPolicy;
  // --- moesim: MoE routing (to be ported to the knob declarations) ---
  /**
   * MoE models: the busiest expert-parallel rank receives this many times its balanced share of
   * routed tokens (1: balanced; capped at expert_parallel_degree, every routed token).
   */
  moeLoadImbalance: number;
  // --- end moesim ---
}

export const MAX_RANKS = 1024;

/** The app's default view: the tiny preset on 4 ranks, aot_eager vs aot_eager_autobucketing. */
export const DEFAULT_CONFIG: Readonly<SimConfig> = deepFreeze({
  model: 'tiny',
  ranks: 4,
  localBatch: null,
  seqLen: null,
  hardware: 'h100',
  network: 'nvlink-ib',
  bandwidthGBps: null,
  latencyUs: null,
  backendA: 'aot_eager',
  backendB: 'aot_eager_autobucketing',
  autobucketing: { ...AUTOBUCKETING_DEFAULTS },
  paramDtype: 'bf16', // SimpleFSDP mixed precision
  reduceDtype: 'fp32',
  activationCheckpointing: null, // the preset's: tiny runs without AC, so the default view is unchanged
  seed: 0,
  jitterPct: 0,
  alignment: true, // torch aligns estimates across ranks by default in the autobucketing pass
  straggler: { rank: null, factor: 1.5 },
  live: { kernels: 'auto', collectiveAlgorithm: 'direct', steps: 10, timing: 'preset' },
  parallelism: { ...PARALLELISM_DEFAULTS }, // FSDP on every rank, as before meshes
  seqParallelGatherCopy: false, // torch 2.13: the batch-1 all-gather needs no copy
  reshardAfterForward: 'default',
  compileMode: 'jit', // fsdp-sim's numbers so far: SimpleFSDP's torch.compile path
  memoryPolicy: 'default',
  moeLoadImbalance: 1, // moesim: balanced routing
} satisfies SimConfig);

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

/** A deep copy of the defaults (DEFAULT_CONFIG's nested objects are shared otherwise). */
export function defaultConfig(): SimConfig {
  return structuredClone(DEFAULT_CONFIG) as SimConfig;
}
