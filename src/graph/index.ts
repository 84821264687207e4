// Public API of src/graph: the IR contract, the SimpleFSDP builder, verifier, ordering,
// printing and the FX graph importer.
export {
  DTYPE_BYTES,
  collectiveCostBytes,
  isCollectiveKind,
  type DType,
  type TensorInfo,
  type CollectiveKind,
  type Phase,
  type GraphNode,
  type ParamInfo,
  type GraphMeta,
  type StepGraph,
} from './types';
export { paramTensorIds, isMoeOp, TOKENS, TARGETS, LOSS, type ComputeOp, type MoeOp } from './ops';
export { GraphError } from './graph_errors';
export {
  resolveStepConfig,
  type ActivationCheckpointing,
  type StepConfig,
} from './config';
export { TRANSFER_STREAM, hbmBytes, hostTransferOf } from './cpu_offload';
export { buildStepGraph } from './builder';
export {
  COMPILE_MODES,
  MEMORY_POLICIES,
  RESHARD_POLICIES,
  recomputePlan,
  reshardsAfterForward,
  type CompileMode,
  type MemoryPolicy,
  type ReshardPolicy,
} from './recompute_plan';
export {
  collectivesByGroup,
  describeMesh,
  fsdpMesh,
  isOneDim,
  epDegree,
  meshGroup,
  meshSize,
  resolveMesh,
  sumGroupCounts,
  type GroupCounts,
  type Mesh,
  type MeshDim,
  type MeshFields,
} from './mesh';
export { kahnOrder, topoOrder, type Edge } from './toposort';
export {
  EP_CHUNK_DIMS,
  EP_CHUNK_STRATEGIES,
  EP_MODULE_FQNS,
  assembleChunked,
  chunkEpRegions,
  withMaterializations,
  type ChunkedRegion,
  type EpChunkDim,
  type EpChunkOptions,
  type EpChunkStrategy,
  type EpModuleFqn,
} from './ep_chunk';
export { countKinds, graphToString } from './print';
export { importFxGraph } from './fx_import';
export { PyHeap } from './heap';
export { MESH_DIMS } from './mesh';
