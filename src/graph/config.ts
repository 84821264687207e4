// StepConfig: what buildStepGraph takes, with every default and its validation.
// Defaults follow torchtitan (AdamW lr 8e-4, betas (0.9, 0.95), eps 1e-8, weight decay 0.1;
// SimpleFSDP mixed precision: bf16 params, fp32 reduce).

import { ConfigError, oneOfMessage } from '../errors';
import { MODEL_NAMES, type ModelArgs, type ModelName } from '../model';
import {
  AC_MODES,
  MAX_DIM,
  MODEL_PRESETS,
  isModelName,
  validateModelArgs,
  type ActivationCheckpointing,
} from '../model';
import { intIn } from '../util';
import { epDegree, fsdpMesh, meshSize, type Mesh } from './mesh';
import {
  COMPILE_MODES,
  MEMORY_POLICIES,
  RESHARD_POLICIES,
  type CompileMode,
  type MemoryPolicy,
  type ReshardPolicy,
} from './recompute_plan';
import type { DType } from './types';

export interface StepConfig {
  /** A preset name or explicit args. */
  readonly model: ModelName | ModelArgs;
  /** Data-parallel ranks n (FSDP group size), 1..65536. */
  readonly worldSize: number;
  /** Local (per-rank) batch; default the model's `batch`. */
  readonly batch?: number;
  /** Sequence length; default the model's `seqLen`. */
  readonly seqLen?: number;
  /** Dtype parameters are cast to before the all-gather (SimpleFSDP param_dtype); default bf16. */
  readonly paramDtype?: DType;
  /** Dtype gradients are cast to before the reduce-scatter (reduce_dtype); default fp32. */
  readonly reduceDtype?: DType;
  /** AdamW learning rate; default 8e-4 (torchtitan). */
  readonly lr?: number;
  /** AdamW beta1; default 0.9. */
  readonly beta1?: number;
  /** AdamW beta2; default 0.95 (torchtitan). */
  readonly beta2?: number;
  /** AdamW eps; default 1e-8. */
  readonly eps?: number;
  /** Decoupled weight decay; default 0.1 (torchtitan). */
  readonly weightDecay?: number;
  /**
   * torchtitan `activation_checkpoint.mode` (checkpoint.ts): 'full' keeps only each block's input
   * through the forward and recomputes the block at the start of its backward; 'selective' is
   * torchtitan's op-level policy (selective_ac_option "op": matmul and attention outputs saved,
   * except every second matmul; norms, adds and SwiGLU recomputed). Default 'none'.
   */
  readonly activationCheckpointing?: ActivationCheckpointing;
  /**
   * The device mesh (mesh.ts): dp_replicate × dp_shard × tp, product = worldSize. Default: FSDP on
   * every rank (dp_shard = worldSize), SimpleFSDP's one 'dp' group.
   */
  readonly mesh?: Mesh;
  /**
   * Copy every sequence-parallel all-gather's output (torch.cat of its chunks), as torch's
   * functional all_gather with gather_dim ≠ 0 did before pytorch PR #169404 (Dec 2025; tp.ts).
   * Default false: torch 2.13, where the batch-1 case is a view.
   */
  readonly seqParallelGatherCopy?: boolean;
  /**
   * torchtitan `parallelism.fsdp_reshard_after_forward` (recompute_plan.ts): 'never' keeps each
   * gathered parameter from its forward use to its last backward use instead of gathering it
   * again. Default 'default' (reshard: fsdp-sim has no pipeline parallel).
   */
  readonly reshardAfterForward?: ReshardPolicy;
  /**
   * graph_trainer `compile.mode`: 'jit' (default) partitions a forward and a backward graph;
   * 'aot_fx_trace' is one joint graph whose recompute `memoryPolicy` decides.
   */
  readonly compileMode?: CompileMode;
  /** graph_trainer `compile.memory_policy` (aot_fx_trace only); default 'default'. */
  readonly memoryPolicy?: MemoryPolicy;
  /**
   * MoE routing (moe.ts): the busiest expert-parallel rank receives this many times its balanced
   * share of routed tokens, ≥ 1, capped at ep (every routed token); default 1 (balanced, as
   * torchtitan's load-balancing bias aims for).
   */
  readonly moeLoadImbalance?: number;
  /**
   * torchtitan `compile.components` with "loss" (inductor): the loss nodes carry attrs.compiled, and
   * the allocator and the cost model price inductor's fused kernels instead of the eager fp32 ops.
   * Default false (eager).
   */
  readonly compileLoss?: boolean;
}

export type { ActivationCheckpointing };

export interface ResolvedStepConfig {
  readonly modelName: string; // preset name or 'custom'
  readonly args: ModelArgs;
  readonly worldSize: number;
  readonly batch: number;
  readonly seqLen: number;
  readonly paramDtype: DType;
  readonly reduceDtype: DType;
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  readonly activationCheckpointing: ActivationCheckpointing;
  readonly mesh: Mesh;
  readonly seqParallelGatherCopy: boolean;
  readonly reshardAfterForward: ReshardPolicy;
  readonly compileMode: CompileMode;
  readonly memoryPolicy: MemoryPolicy;
  readonly moeLoadImbalance: number;
  readonly compileLoss: boolean;
}

const STEP_CONFIG_DEFAULTS = {
  paramDtype: 'bf16',
  reduceDtype: 'fp32',
  lr: 8e-4,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0.1,
  activationCheckpointing: 'none',
} as const;

/** Float dtypes a parameter or a gradient may be communicated in. */
const FLOAT_DTYPES: readonly DType[] = ['fp32', 'bf16', 'fp16'];
const KEYS = [
  'model',
  'worldSize',
  'batch',
  'seqLen',
  'paramDtype',
  'reduceDtype',
  'lr',
  'beta1',
  'beta2',
  'eps',
  'weightDecay',
  'activationCheckpointing',
  'mesh',
  'seqParallelGatherCopy',
  'reshardAfterForward',
  'compileMode',
  'memoryPolicy',
  'moeLoadImbalance',
  'compileLoss',
];
const MAX_WORLD_SIZE = 65536;
/** Tokens per rank: keeps every tensor's byte count an exact integer (< 2^53). */
const MAX_TOKENS = 2 ** 32;

/** Number in a range; `hiOpen` excludes hi, `loOpen` excludes lo. */
function numIn(field: string, v: unknown, lo: number, hi: number, loOpen: boolean, hiOpen: boolean): number {
  const aboveLo = (x: number) => (loOpen ? x > lo : x >= lo);
  const belowHi = (x: number) => (hiOpen ? x < hi : x <= hi);
  const okRange = typeof v === 'number' && Number.isFinite(v) && aboveLo(v) && belowHi(v);
  if (!okRange) {
    const range = `${loOpen ? '(' : '['}${lo}, ${hi}${hiOpen ? ')' : ']'}`;
    throw new ConfigError(field, `${field} must be a number in ${range}, got ${JSON.stringify(v)}`);
  }
  return v as number;
}

function dtypeOf(field: string, v: unknown, dflt: DType): DType {
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !(FLOAT_DTYPES as readonly string[]).includes(v)) {
    throw new ConfigError(field, oneOfMessage(field, FLOAT_DTYPES, v));
  }
  return v as DType;
}

function boolOf(field: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new ConfigError(field, `${field} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function enumOf<T extends string>(field: string, values: readonly T[], v: unknown, dflt: T): T {
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new ConfigError(field, oneOfMessage(field, values, v));
  }
  return v as T;
}

/** The mesh (default: FSDP on every rank); each degree an integer ≥ 1, their product worldSize. */
function meshOf(v: unknown, worldSize: number): Mesh {
  if (v === undefined) return fsdpMesh(worldSize);
  if (typeof v !== 'object' || v === null)
    throw new ConfigError('mesh', `mesh must be {dpReplicate, dpShard, tp, ep?}, got ${JSON.stringify(v)}`);
  const o = v as Record<string, unknown>;
  const ep = o.ep === undefined ? 1 : intIn('mesh.ep', o.ep, 1, MAX_WORLD_SIZE);
  const m: Mesh = {
    dpReplicate: intIn('mesh.dpReplicate', o.dpReplicate, 1, MAX_WORLD_SIZE),
    dpShard: intIn('mesh.dpShard', o.dpShard, 1, MAX_WORLD_SIZE),
    tp: intIn('mesh.tp', o.tp, 1, MAX_WORLD_SIZE),
    ...(ep > 1 ? { ep } : {}),
  };
  if (meshSize(m) !== worldSize) {
    throw new ConfigError(
      'mesh',
      `mesh.dpReplicate · mesh.dpShard · mesh.tp must equal worldSize (${worldSize}), got ${m.dpReplicate} · ` +
        `${m.dpShard} · ${m.tp} = ${meshSize(m)}`,
    );
  }
  return m;
}

/**
 * torchtitan's Llama TP plan splits heads, kv heads, the feed-forward and the vocabulary across tp
 * and (sequence parallel) the tokens: each must divide evenly.
 */
function checkTpSplits(args: ModelArgs, tokens: number, tp: number): void {
  if (tp === 1) return;
  const dims: [string, number][] = [
    ['nHeads', args.nHeads],
    ['nKvHeads', args.nKvHeads],
    ['ffnDim', args.ffnDim],
    ['vocabSize', args.vocabSize],
    ['batch · seqLen', tokens],
  ];
  for (const [name, v] of dims) {
    if (v % tp !== 0)
      throw new ConfigError(
        'mesh.tp',
        `mesh.tp (tensor_parallel_degree ${tp}) must divide the model's ${name} (${v}): the TP plan splits it across ` +
          `the tp group`,
      );
  }
}

/**
 * The hidden dims torchtitan's MoE TP plan splits (moe_sharding.py, b5bcd76): the shared experts'
 * (colwise w1/w3, rowwise w2) always, the routed experts' F (w1_EFD Shard(1), w2_EDF Shard(2)) when
 * expert parallel is off; under ep > 1 the routed experts are split over ep only.
 */
function checkMoeTpSplits(moe: NonNullable<ModelArgs['moe']>, mesh: Mesh): void {
  const tp = mesh.tp;
  if (tp === 1) return;
  const dims: [string, number][] = [];
  if (moe.numSharedExperts > 0)
    dims.push(['moe.moeFfnDim · moe.numSharedExperts', moe.moeFfnDim * moe.numSharedExperts]);
  if (epDegree(mesh) === 1) dims.push(['moe.moeFfnDim', moe.moeFfnDim]);
  for (const [name, v] of dims) {
    if (v % tp !== 0)
      throw new ConfigError(
        'mesh.tp',
        `mesh.tp (tensor_parallel_degree ${tp}) must divide the model's ${name} (${v}): the MoE TP plan splits it ` +
          'across the tp group',
      );
  }
}

/**
 * What an MoE step needs (torchtitan's checks): an expert-
 * parallel degree only on an MoE model, dividing its experts (each ep rank holds E / ep of them),
 * and a tp that divides what the MoE TP plan splits.
 */
function checkMoe(args: ModelArgs, mesh: Mesh): void {
  const ep = epDegree(mesh);
  const moe = args.moe;
  if (moe === undefined) {
    if (ep > 1)
      throw new ConfigError('mesh.ep', `mesh.ep (expert_parallel_degree ${ep}) needs an MoE model; this one is dense`);
    return;
  }
  if (moe.numExperts % ep !== 0)
    throw new ConfigError(
      'mesh.ep',
      `mesh.ep (expert_parallel_degree ${ep}) must divide the model's numExperts (${moe.numExperts}): each ep ` +
        'rank holds numExperts / ep experts',
    );
  checkMoeTpSplits(moe, mesh);
}

/** Validates every field (ConfigError naming the field, value and valid set) and fills defaults. */
export function resolveStepConfig(cfg: unknown): ResolvedStepConfig {
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) {
    throw new ConfigError(
      'config',
      `config must be an object with keys [${KEYS.join(', ')}], got ${JSON.stringify(cfg)}`,
    );
  }
  const c = cfg as Record<string, unknown>;
  for (const k of Object.keys(c)) {
    if (!KEYS.includes(k)) throw new ConfigError(k, oneOfMessage('config key', KEYS, k));
  }
  let args: ModelArgs;
  let modelName: string;
  if (typeof c.model === 'string') {
    if (!isModelName(c.model)) throw new ConfigError('model', oneOfMessage('model', MODEL_NAMES, c.model));
    args = MODEL_PRESETS[c.model];
    modelName = c.model;
  } else {
    args = validateModelArgs(c.model, 'model');
    modelName = 'custom';
  }
  const worldSize = intIn('worldSize', c.worldSize, 1, MAX_WORLD_SIZE);
  const batch = c.batch === undefined ? args.batch : intIn('batch', c.batch, 1, MAX_DIM);
  const seqLen = c.seqLen === undefined ? args.seqLen : intIn('seqLen', c.seqLen, 1, MAX_DIM);
  if (batch * seqLen > MAX_TOKENS) {
    throw new ConfigError(
      'seqLen',
      `batch · seqLen (tokens per rank) must be ≤ ${MAX_TOKENS}, got ${batch} · ${seqLen} = ${batch * seqLen}`,
    );
  }
  const mesh = meshOf(c.mesh, worldSize);
  checkTpSplits(args, batch * seqLen, mesh.tp);
  const activationCheckpointing = enumOf(
    'activationCheckpointing',
    AC_MODES,
    c.activationCheckpointing,
    STEP_CONFIG_DEFAULTS.activationCheckpointing,
  );
  checkMoe(args, mesh);
  const d = STEP_CONFIG_DEFAULTS;
  const opt = (k: string, dflt: number, lo: number, hi: number, loOpen: boolean, hiOpen: boolean) =>
    c[k] === undefined ? dflt : numIn(k, c[k], lo, hi, loOpen, hiOpen);
  return {
    modelName,
    args,
    worldSize,
    batch,
    seqLen,
    paramDtype: dtypeOf('paramDtype', c.paramDtype, d.paramDtype),
    reduceDtype: dtypeOf('reduceDtype', c.reduceDtype, d.reduceDtype),
    lr: opt('lr', d.lr, 0, 10, false, false),
    beta1: opt('beta1', d.beta1, 0, 1, false, true),
    beta2: opt('beta2', d.beta2, 0, 1, false, true),
    eps: opt('eps', d.eps, 0, 1, true, false),
    weightDecay: opt('weightDecay', d.weightDecay, 0, 10, false, false),
    activationCheckpointing,
    mesh,
    seqParallelGatherCopy: boolOf('seqParallelGatherCopy', c.seqParallelGatherCopy, false),
    reshardAfterForward: enumOf('reshardAfterForward', RESHARD_POLICIES, c.reshardAfterForward, 'default'),
    compileMode: enumOf('compileMode', COMPILE_MODES, c.compileMode, 'jit'),
    memoryPolicy: enumOf('memoryPolicy', MEMORY_POLICIES, c.memoryPolicy, 'default'),
    moeLoadImbalance: opt('moeLoadImbalance', 1, 1, MAX_WORLD_SIZE, false, false),
    compileLoss: boolOf('compileLoss', c.compileLoss, false),
  };
}
