// Backend registry: every backend is one pure function (graph, cost, options) → Schedule.
// The config keys follow torchtitan: `compile.model_backend_override` (when set) wins over
// `compile.backend`. Unknown names are a ConfigError listing the valid ones.

import { ConfigError } from '../errors';
import type { CostModel } from '../estimate';
import type { GraphNode, StepGraph } from '../graph';
import { aotEager } from './aot_eager';
import { autobucketing } from './autobucketing';
import { fsdp2Eager, fsdp2StreamOf } from './fsdp2_eager';
import { transformerBlock } from './transformer_block';
import { BACKEND_NAMES, type Backend, type BackendName, type Schedule } from './schedule_types';

export {
  BACKEND_NAMES,
  type BackendName,
  type Bucket,
  type ReasonCode,
  type ReasonDetail,
  type PrefetchRefusalDetail,
  type NotBucketedWhy,
  type Reason,
  type Schedule,
  type PassStats,
  type Backend,
} from './schedule_types';
export { runAotEager } from './aot_eager';
export {
  AUTOBUCKETING_DEFAULTS,
  AUTOBUCKETING_KNOBS,
  AUTOBUCKETING_PROFILES,
  compareWithTorch,
  DEFAULT_TORCH_PROFILE,
  matchLogGraphs,
  logMismatches,
  parseTorchPassLog,
  runAutobucketing,
  torchProfileLabel,
  type Agreement,
  type AutobucketingOptions,
  type Decision,
  type LogMismatch,
  type TorchLogGraph,
} from './autobucketing';
export { fsdp2StreamOf, runFsdp2Eager } from './fsdp2_eager';
export { moduleOf, runTransformerBlock } from './transformer_block';
export { indexGraph } from './graph_index';
export { reassignFsdpAllGathers } from './collective_pgs';
export { sinkReduceScatterWaits } from './dense_region';
export { epOverlapGraph } from './ep_overlap';
export type { KnobHelp, KnobSpec } from './knob_specs';

/** `field must be one of [a, b, c], got 'x'` (torchtitan's wording). */
function unknownBackend(field: string, got: unknown): ConfigError {
  const shown = typeof got === 'string' ? `'${got}'` : JSON.stringify(got);
  return new ConfigError(field, `${field} must be one of [${BACKEND_NAMES.join(', ')}], got ${shown}`);
}

const REGISTRY: Readonly<Record<BackendName, Backend<never>>> = {
  aot_eager: aotEager as Backend<never>,
  aot_eager_autobucketing: autobucketing as Backend<never>,
  transformer_block: transformerBlock as Backend<never>,
  fsdp2_eager: fsdp2Eager as Backend<never>,
};

function isBackendName(name: unknown): name is BackendName {
  return typeof name === 'string' && (BACKEND_NAMES as readonly string[]).includes(name);
}

/** The backend registered under `name`; ConfigError for an unknown name. */
export function getBackend(name: string, field = 'compile.backend'): Backend {
  if (!isBackendName(name)) throw unknownBackend(field, name);
  return REGISTRY[name] as unknown as Backend;
}

/** Runs backend `name` on `graph`; options are checked against the backend's knobs. */
export function runBackend(
  name: string,
  graph: StepGraph,
  cost: CostModel,
  options?: Readonly<Record<string, number | boolean | string>>,
): Schedule {
  return getBackend(name).run(graph, cost, options as Record<string, number | boolean | string> | undefined);
}

export interface CompileConfig {
  readonly 'compile.backend'?: string;
  readonly 'compile.model_backend_override'?: string;
}

/**
 * torchtitan's rule: `compile.model_backend_override` when set (non-empty), else `compile.backend` (default aot_eager).
 */
export function resolveBackendName(cfg: CompileConfig): BackendName {
  const override = cfg['compile.model_backend_override'];
  if (override !== undefined && override !== '') {
    if (!isBackendName(override)) {
      throw unknownBackend('compile.model_backend_override', override);
    }
    return override;
  }
  const backend = cfg['compile.backend'] ?? 'aot_eager';
  if (!isBackendName(backend)) throw unknownBackend('compile.backend', backend);
  return backend;
}

/** Which stream's caching-allocator pool serves a node's input or output buffers. */
type AllocationStream = (node: GraphNode, role: 'input' | 'output') => string;

/**
 * The stream whose caching-allocator pool serves a collective's buffers under `backend`, for
 * src/sim/allocator.ts; undefined = every buffer on the compute stream (SimpleFSDP under
 * torch.compile allocates collective outputs on the current stream).
 */
export function allocationStreamOf(backend: BackendName): AllocationStream | undefined {
  return backend === 'fsdp2_eager' ? fsdp2StreamOf : undefined;
}

/** The passes each backend runs, in order (printPasses-style, for CLI / explain panel). */
export const BACKEND_PASSES: Readonly<Record<BackendName, readonly string[]>> = {
  aot_eager: ['wait_after_collective'],
  aot_eager_autobucketing: ['schedule_overlap (OverlapScheduler)', 'bucket_collectives (OverlapPreservingBucketer)'],
  transformer_block: [
    'manual_bucket_collectives (ManualOverlapPreservingBucketer, one bucket per module bucket plan entry)',
    'manual_reorder_graph (ManualOverlapScheduler: prefetch the next entry, defer reduce-scatter waits)',
  ],
  fsdp2_eager: [
    'fully_shard_per_block (flat all-gather / reduce-scatter per module)',
    'implicit_prefetch_one_module_ahead',
  ],
};
