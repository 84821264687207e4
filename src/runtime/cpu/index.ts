// CPU reference kernels: the spec every WGSL kernel is checked against, and the fallback backend.
export { createCpuKernels } from './cpu_kernels';
export {
  intAttr, adamwStep, checkTensors, matmulDims, embeddingDims, rmsNormDims, attentionDims,
  crossEntropyDims, adamwAttrs, type MatmulDims,
} from './attrs';
export { matmul, matmulStrides } from './cpu_matmul';
export { adamwBiasCorrections } from './adamw';
