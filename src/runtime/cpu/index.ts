// CPU reference kernels: the spec every WGSL kernel is checked against, and the fallback backend.
export { createCpuKernels, runCpuOp } from './cpu_kernels';
export type { CpuTensor } from './cpu_kernels';
export * from './attrs';
export { matmul, matmulStrides } from './cpu_matmul';
export { embedding, embeddingBwd } from './embedding';
export { rmsNorm, rmsNormBwd } from './rms_norm';
export { swiglu, swigluBwd } from './swiglu';
export { attention, attentionBwd, attentionIndex } from './attention';
export { add } from './add';
export { crossEntropy, crossEntropyBwd } from './cross_entropy';
export { adamw, adamwBiasCorrections } from './adamw';
export { moeRouter, moeRouterBwd } from './moe_router';
export { combineRows, combineRowsBwd, gatherRows } from './moe_rows';
export { expertOrder, offsetsOf, sourceToExpertMajor, type ExpertOrder } from './moe_index';
export { groupedMatmul, groupedMatmulBwdW, groupedMatmulBwdX } from './grouped_matmul';
export { combineDims, gatherDims, groupedMatmulDims, routerDims, runMoeCpuOp } from './moe_ops';
export type { MoeKernelOp } from './moe_ops';
export type { CombineDims } from './moe_rows';
