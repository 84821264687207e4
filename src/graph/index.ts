// Public API of src/graph: the IR contract, the SimpleFSDP builder, verifier, ordering,
// printing and the FX graph importer.
export * from './types';
export * from './ops';
export { GraphError } from './graph_errors';
export {
  AC_MODES,
  FLOAT_DTYPES,
  MAX_TOKENS,
  MAX_WORLD_SIZE,
  STEP_CONFIG_DEFAULTS,
  resolveStepConfig,
  type ActivationCheckpointing,
  type ResolvedStepConfig,
  type StepConfig,
} from './config';
export { RECOMPUTE_SUFFIX, SELECTIVE_OP_SAVED, blockWeights, isRecomputeNode } from './checkpoint';
export { buildStepGraph } from './builder';
export {
  COMPILE_MODES, MEMORY_POLICIES, RESHARD_POLICIES, recomputePlan, reshardsAfterForward,
  type CompileMode, type MemoryPolicy, type RecomputePlan, type ReshardPolicy,
} from './recompute_plan';
export { DP_GROUP, MASTER_DTYPE, shardParam, tpPlacement, type ShardedParam } from './fsdp';
export {
  collectivesByGroup,
  describeMesh,
  fsdpMesh,
  isOneDim,
  meshGroup,
  meshSize,
  resolveMesh,
  sumGroupCounts,
  type GroupCounts,
  type Mesh,
  type MeshDim,
  type MeshFields,
  type MeshGroup,
} from './mesh';
export { ATTENTION_BWD_FACTOR, attentionBwdFlops, attentionFwdFlops, matmulFlops, numel, tensorBytes } from './flops';
export { verifyGraph } from './verify';
export { dependencies, isTopologicalOrder, kahnOrder, topoOrder, type Edge, type EdgeWhy } from './toposort';
export { countKinds, graphToString } from './print';
export { importFxGraph } from './fx_import';
export { FX_FORMAT, TORCH_DTYPES, readFxDump, type FxDump, type FxNode } from './fx_schema';
export { classifyTarget, fxOpName, type FxClass } from './fx_targets';
export { inferFxLayers } from './fx_layers';
