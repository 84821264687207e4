// SimConfig: every knob the UI, the URL and the CLI share. Field names follow torchtitan / torch
// where one exists (`compile.model_backend_override` → backendA/backendB, the autobucketing knobs
// verbatim from torch._inductor.config.aten_distributed_optimizations). This file holds the types
// only: what each field means, its range and its default is its row in knobs.ts, and
// DEFAULT_CONFIG is made of those rows (docs/ARCHITECTURE.md §4).

import type { AutobucketingOptions, BackendName } from '../backends';
import type { HardwareName, NetworkName } from '../estimate';
import type { CompileMode, EpChunkDim, EpChunkStrategy, EpModuleFqn, MemoryPolicy, ReshardPolicy } from '../graph';
import type { ActivationCheckpointing, ModelName } from '../model';
import type { CollectiveAlgorithm, KernelChoice, TimingMode } from '../runtime/index_options';
import type { COMM_DTYPES } from './fields';
import { CONFIG_FIELDS } from './knobs';
import type { ParallelismConfig } from './parallelism';

type CommDtype = (typeof COMM_DTYPES)[number];

interface StragglerConfig {
  rank: number | null;
  factor: number;
}

/** graph_trainer's compile.ep_overlap (configs.py EpOverlapConfig). */
interface EpOverlapConfig {
  enabled: boolean;
  chunkDim: EpChunkDim;
  strategy: EpChunkStrategy;
  moduleFqn: EpModuleFqn;
}

interface LiveConfig {
  kernels: KernelChoice;
  collectiveAlgorithm: CollectiveAlgorithm;
  steps: number;
  timing: TimingMode;
}

/** A run's config. What each field means, its range and its default: the field's row in knobs.ts. */
export interface SimConfig {
  model: ModelName;
  ranks: number;
  localBatch: number | null;
  seqLen: number | null;
  hardware: HardwareName;
  network: NetworkName;
  bandwidthGBps: number | null;
  latencyUs: number | null;
  backendA: BackendName;
  backendB: BackendName;
  autobucketing: AutobucketingOptions;
  paramDtype: CommDtype;
  reduceDtype: CommDtype;
  activationCheckpointing: ActivationCheckpointing | null;
  seed: number;
  jitterPct: number;
  alignment: boolean;
  straggler: StragglerConfig;
  live: LiveConfig;
  parallelism: ParallelismConfig;
  seqParallelGatherCopy: boolean;
  reshardAfterForward: ReshardPolicy;
  compileMode: CompileMode;
  memoryPolicy: MemoryPolicy;
  cudaGraphs: 'on' | 'off' | null;
  fsdpAgRsOverlap: boolean;
  moeLoadImbalance: number;
  fsdpDenseRegionOverlap: boolean;
  epOverlap: EpOverlapConfig;
  compileLoss: 'on' | 'off' | null;
}

/** Every leaf of SimConfig as a dotted path: `seed`, `live.steps`, `autobucketing.max_in_flight_gb`. */
export type ConfigPath = {
  [K in keyof SimConfig & string]: [SimConfig[K]] extends [object] ? `${K}.${keyof SimConfig[K] & string}` : K;
}[keyof SimConfig & string];

/** The type of the leaf at a dotted path. */
export type ConfigValue<P extends ConfigPath> = P extends `${infer G extends keyof SimConfig}.${infer L}`
  ? L extends keyof SimConfig[G]
    ? SimConfig[G][L]
    : never
  : P extends keyof SimConfig
    ? SimConfig[P]
    : never;

/** The rows' defaults as one nested object. */
function defaultsOfRows(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) {
    const [group, leaf] = f.path.split('.');
    if (leaf === undefined) out[group] = f.default;
    else ((out[group] ??= {}) as Record<string, unknown>)[leaf] = f.default;
  }
  return out;
}

/** The app's default view: the tiny preset on 4 ranks, aot_eager vs aot_eager_autobucketing. */
export const DEFAULT_CONFIG: Readonly<SimConfig> = deepFreeze(defaultsOfRows()) as unknown as Readonly<SimConfig>;

/** The default mesh: FSDP on every rank (dp_shard -1), as before meshes. */
export const PARALLELISM_DEFAULTS: Readonly<ParallelismConfig> = DEFAULT_CONFIG.parallelism;

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

/** A deep copy of the defaults (DEFAULT_CONFIG's nested objects are shared otherwise). */
export function defaultConfig(): SimConfig {
  return structuredClone(DEFAULT_CONFIG) as SimConfig;
}
