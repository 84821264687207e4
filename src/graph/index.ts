// Public API of src/graph: the IR contract, the SimpleFSDP builder, verifier, ordering,
// printing and the FX graph importer.
export * from './types';
export * from './ops';
export { GraphError } from './graph_errors';
export {
  resolveStepConfig,
  type ActivationCheckpointing,
  type StepConfig,
} from './config';
export { RECOMPUTE_SUFFIX, blockWeights, isRecomputeNode } from './checkpoint';
export { TRANSFER_STREAM, hbmBytes, hostTransferOf } from './cpu_offload';
export { buildStepGraph } from './builder';
export {
  COMPILE_MODES, MEMORY_POLICIES, RESHARD_POLICIES, recomputePlan, reshardsAfterForward,
  type CompileMode, type MemoryPolicy, type ReshardPolicy,
} from './recompute_plan';
export { tpPlacement } from './fsdp';
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
export { verifyGraph } from './verify';
export { dependencies, isTopologicalOrder, kahnOrder, topoOrder, type Edge } from './toposort';
export { countKinds, graphToString } from './print';
export { importFxGraph } from './fx_import';
export { readFxDump } from './fx_schema';
export { PyHeap } from './heap';
export { MESH_DIMS } from './mesh';
