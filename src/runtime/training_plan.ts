// Pure planning for a live training run, shared by the browser and Node coordinators: options
// validation, graph → schedule (once; every rank executes the same schedule, on a mesh too), and
// the virtual clock — `simulate` on the schedule with the
// preset cost model, or, in 'measured' mode, with per-node measured device times (median across
// ranks) and the network scaled so the preset's compute:comm ratio is kept (docs/ARCHITECTURE.md §6).

import { runBackend, BACKEND_NAMES, type BackendName, type Schedule } from '../backends';
import { ConfigError, oneOfMessage } from '../errors';
import { makeCostModel, type HardwareName, type NetworkName } from '../estimate';
import type { CostModel } from '../estimate';
import {
  buildStepGraph,
  type ActivationCheckpointing,
  type CompileMode,
  type MemoryPolicy,
  type ReshardPolicy,
  type StepConfig,
} from '../graph';
import type { StepGraph } from '../graph';
import { resolveMesh, type Mesh, type MeshFields } from '../graph';
import { MODEL_PRESETS, type ModelArgs } from '../model';
import { simulate } from '../sim';
import { intIn, midpointMedian } from '../util';
import type { TraceEvent } from '../trace';
import { COLLECTIVE_ALGORITHMS, type CollectiveAlgorithm } from './comm';
import type { DataConfig } from './data';
import { isPlainFsdp } from './mesh_ranks';
import type { StepPhases } from './exec';
import type { StartupProgress } from './startup';
import {
  KERNEL_CHOICES,
  LIVE_MODELS,
  MAX_GLOBAL_BATCH,
  MAX_LIVE_LR,
  MAX_LIVE_RANKS,
  MAX_LIVE_STEPS,
  MAX_SEED,
  TIMING_MODES,
  type KernelChoice,
  type LiveModel,
  type TimingMode,
} from './live_options';

export type RankCount = number;

/** Learning rate for live runs of `tiny`: higher than torchtitan's 8e-4 so the loss halves in ~40 steps. */
export const LIVE_DEFAULT_LR = 3e-3;
/** Rows per step across all ranks: fixed, so every rank count dividing it trains on the same global batch. */
export const DEFAULT_GLOBAL_BATCH = 8;

/**
 * Default global batch for `ranks`: DEFAULT_GLOBAL_BATCH rounded up to a multiple of the ranks (one row each at least).
 */
export function defaultGlobalBatch(ranks: number): number {
  return ranks * Math.ceil(DEFAULT_GLOBAL_BATCH / ranks);
}
export const DEFAULT_COMM_TIMEOUT_MS = 60_000;

interface TrainingProgress {
  readonly step: number; // 1-based
  readonly loss: number; // mean of the ranks' local losses
  readonly stepsPerSec: number; // wall clock, since the first step started
  /** The ranks' kernel backends (as in TrainingResult.device), known from step 1. */
  readonly device?: string;
  /** The step's events on the virtual clock (same array while they do not change). */
  readonly events?: readonly TraceEvent[];
  /** Where this step's wall time went, per rank (ms). */
  readonly phases?: readonly StepPhases[];
  /** Measured timing mode: this step as the machine ran it, per rank (wall_events.ts). */
  readonly wallEvents?: readonly TraceEvent[];
}

export interface TrainingOptions {
  readonly model: LiveModel;
  readonly ranks: RankCount;
  /** torchtitan parallelism.expert_parallel_degree (MoE models; divides dp_shard · tp); default 1. */
  readonly ep?: number;
  /** torchtitan parallelism.tensor_parallel_degree (sequence parallel as its Llama plan); default 1. */
  readonly tp?: number;
  /** torchtitan parallelism.data_parallel_replicate_degree (HSDP); default 1. dp_shard is the rest of the ranks. */
  readonly dpReplicate?: number;
  readonly steps: number;
  readonly backend: BackendName;
  readonly seed: number;
  readonly kernels: KernelChoice;
  readonly collective: CollectiveAlgorithm;
  readonly timing: TimingMode;
  readonly hardware: HardwareName;
  /** Network preset for the virtual clock; default 'nvlink-ib'. */
  readonly network?: NetworkName;
  /** AdamW lr; default LIVE_DEFAULT_LR. */
  readonly lr?: number;
  /**
   * Rows per step over all ranks (divisible by the data-parallel ranks, ranks / tp); default defaultGlobalBatch(those).
   */
  readonly globalBatch?: number;
  /** Collective wait timeout per rank, ms; default DEFAULT_COMM_TIMEOUT_MS. */
  readonly commTimeoutMs?: number;
  /** Overrides of the tiny preset's args (e.g. an odd vocabSize, whose shards are padded). */
  readonly modelArgs?: Partial<ModelArgs>;
  /**
   * torchtitan activation_checkpoint.mode of the step graph; default 'none'. 'selective' / 'full' add recompute ops,
   * same math.
   */
  readonly activationCheckpointing?: ActivationCheckpointing;
  /** torchtitan fsdp_reshard_after_forward / graph_trainer compile.mode and memory_policy of the step graph. */
  readonly reshardAfterForward?: ReshardPolicy;
  readonly compileMode?: CompileMode;
  readonly memoryPolicy?: MemoryPolicy;
  /** Testing: make one rank throw at the start of a step. */
  readonly injectFault?: { readonly rank: number; readonly step: number };
  readonly onProgress?: (p: TrainingProgress) => void;
  /** Start-up progress per rank (startup.ts), from the spawn to each rank's first step. */
  readonly onStartup?: (p: StartupProgress) => void;
  /** Aborting terminates every rank; runTraining rejects with an AbortError. */
  readonly signal?: AbortSignal;
}

export interface TrainingResult {
  readonly device: string; // the ranks' kernel backends, e.g. 'cpu reference'
  readonly losses: number[]; // per step, mean over ranks
  readonly finalParamsHash: string; // FNV-1a over every full parameter, param-table order
  readonly stepsPerSec: number;
  readonly events: TraceEvent[]; // the last step on the virtual clock
  /** Where each step's wall time went: phases[step − 1][rank], ms (exec/phases.ts). */
  readonly phases: StepPhases[][];
  /** Measured timing mode: the last step as this machine ran it, µs since each rank's step started. */
  readonly wallEvents?: TraceEvent[];
}

export interface TrainingPlan {
  readonly graph: StepGraph;
  readonly schedule: Schedule;
  readonly cost: CostModel; // preset cost model (plans the schedule; times 'preset' mode)
  readonly data: DataConfig;
  readonly lr: number;
}

function oneOf<T extends string | number>(field: string, allowed: readonly T[], v: unknown): T {
  if (!(allowed as readonly unknown[]).includes(v)) throw new ConfigError(field, oneOfMessage(field, allowed, v));
  return v as T;
}

/** Validate the options (ConfigError naming the field), build graph and schedule. */
export function planTraining(opts: TrainingOptions): TrainingPlan {
  oneOf('model', LIVE_MODELS, opts.model);
  const ranks = intIn('ranks', opts.ranks, 1, MAX_LIVE_RANKS);
  intIn('steps', opts.steps, 1, MAX_LIVE_STEPS);
  const backend = oneOf('backend', BACKEND_NAMES, opts.backend);
  intIn('seed', opts.seed, 0, MAX_SEED);
  oneOf('kernels', KERNEL_CHOICES, opts.kernels);
  oneOf('collective', COLLECTIVE_ALGORITHMS, opts.collective);
  oneOf('timing', TIMING_MODES, opts.timing);
  const lr = opts.lr ?? LIVE_DEFAULT_LR;
  if (!Number.isFinite(lr) || lr <= 0 || lr > MAX_LIVE_LR)
    throw new ConfigError('lr', `lr must be a number in (0, ${MAX_LIVE_LR}], got ${JSON.stringify(opts.lr)}`);
  const mesh = liveMesh({ ...opts, ranks });
  const dp = mesh.dpReplicate * mesh.dpShard;
  const globalBatch = intIn('globalBatch', opts.globalBatch ?? defaultGlobalBatch(dp), 1, MAX_GLOBAL_BATCH);
  if (globalBatch % dp !== 0) {
    const why = `globalBatch must be divisible by the ${dp} data-parallel ranks (ranks / tp), got ${globalBatch}`;
    throw new ConfigError('globalBatch', why);
  }
  const args: ModelArgs = { ...MODEL_PRESETS[opts.model], ...opts.modelArgs };
  const graph = buildStepGraph({
    model: opts.modelArgs === undefined ? opts.model : args,
    worldSize: ranks,
    batch: globalBatch / dp,
    paramDtype: 'fp32',
    reduceDtype: 'fp32',
    lr,
    ...(isPlainFsdp(mesh) ? {} : { mesh }),
    ...(opts.activationCheckpointing !== undefined ? { activationCheckpointing: opts.activationCheckpointing } : {}),
    ...recomputeKnobs(opts),
  });
  const cost = makeCostModel({ hardware: opts.hardware, network: opts.network ?? 'nvlink-ib', computeDtype: 'fp32' });
  const schedule = runBackend(backend, graph, cost);
  const data: DataConfig = {
    vocab: args.vocabSize,
    seqLen: graph.meta.seqLen,
    globalBatch,
    seed: (opts.seed ^ 0x5eed) >>> 0,
  };
  return { graph, schedule, cost, data, lr };
}

/** The step-graph knobs of the recompute plan a run sets (absent ones keep the builder's defaults). */
function recomputeKnobs(o: TrainingOptions): Pick<StepConfig, 'reshardAfterForward' | 'compileMode' | 'memoryPolicy'> {
  return {
    ...(o.reshardAfterForward !== undefined ? { reshardAfterForward: o.reshardAfterForward } : {}),
    ...(o.compileMode !== undefined ? { compileMode: o.compileMode } : {}),
    ...(o.memoryPolicy !== undefined ? { memoryPolicy: o.memoryPolicy } : {}),
  };
}

const LIVE_MESH_FIELDS: MeshFields = { dpReplicate: 'dpReplicate', dpShard: 'dp_shard', tp: 'tp', ep: 'ep' };

/** The mesh of a live run: tp × dp_replicate from the options, dp_shard the rest of the ranks (torchtitan's -1). */
export function liveMesh(opts: Pick<TrainingOptions, 'ranks' | 'tp' | 'dpReplicate' | 'ep'>): Mesh {
  const ranks = opts.ranks;
  const tp = intIn('tp', opts.tp ?? 1, 1, MAX_LIVE_RANKS);
  const dpReplicate = intIn('dpReplicate', opts.dpReplicate ?? 1, 1, MAX_LIVE_RANKS);
  const ep = intIn('ep', opts.ep ?? 1, 1, MAX_LIVE_RANKS);
  return resolveMesh(ranks, { dpReplicate, dpShard: -1, tp, ep }, LIVE_MESH_FIELDS);
}

/** Events of one step on the preset's clock. */
export function presetEvents(plan: TrainingPlan, worldSize: number): TraceEvent[] {
  return [...simulate({ worldSize, schedules: plan.schedule, cost: plan.cost }).events];
}

/**
 * Events of one step timed by measured device times (median across ranks per node); collectives
 * keep the preset's compute:comm ratio: commScale = Σ measured compute / Σ preset compute.
 */
export function measuredEvents(
  plan: TrainingPlan,
  worldSize: number,
  opts: Pick<TrainingOptions, 'hardware' | 'network'>,
  perRank: readonly Readonly<Record<string, number>>[],
): TraceEvent[] {
  const names = new Set<string>();
  for (const r of perRank) for (const k of Object.keys(r)) names.add(k);
  if (names.size === 0) return presetEvents(plan, worldSize); // backend cannot time: stay on the preset clock
  const measuredUs: Record<string, number> = {};
  for (const n of names) measuredUs[n] = midpointMedian(perRank.map((r) => r[n]).filter((x) => x !== undefined));
  let presetSum = 0;
  let measuredSum = 0;
  for (const node of plan.schedule.graph.nodes) {
    if (node.kind !== 'compute' || measuredUs[node.name] === undefined) continue;
    presetSum += plan.cost.computeUs(node);
    measuredSum += measuredUs[node.name];
  }
  const commScale = presetSum > 0 && measuredSum > 0 ? measuredSum / presetSum : 1;
  const cost = makeCostModel({
    hardware: opts.hardware,
    network: opts.network ?? 'nvlink-ib',
    computeDtype: 'fp32',
    measuredUs,
    commScale,
  });
  return [...simulate({ worldSize, schedules: plan.schedule, cost }).events];
}
