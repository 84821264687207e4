// CPU reference kernels: the spec every WGSL kernel is checked against, and the fallback backend.
export { createCpuKernels } from './cpu_kernels';
export {
  intAttr,
  adamwStep,
  checkTensors,
  matmulDims,
  embeddingDims,
  rmsNormDims,
  attentionDims,
  crossEntropyDims,
  adamwAttrs,
  notAKernel,
  type AttentionDims,
  type MatmulDims,
} from './attrs';
export { matmul, matmulStrides } from './cpu_matmul';
export { swiglu, swigluBwd } from './swiglu';
export { adamwBiasCorrections } from './adamw';
export { moeRouter, moeRouterBwd } from './moe_router';
export { combineRows, combineRowsBwd, gatherRows } from './moe_rows';
export { expertOrder, offsetsOf, sourceToExpertMajor, type ExpertOrder } from './moe_index';
export { groupedMatmul, groupedMatmulBwdW, groupedMatmulBwdX } from './grouped_matmul';
export { combineDims, gatherDims, groupedMatmulDims, isMoeKernelOp, routerDims, checkMoeTensors } from './moe_ops';
export type { MoeKernelOp } from './moe_ops';
export type { CombineDims } from './moe_rows';
