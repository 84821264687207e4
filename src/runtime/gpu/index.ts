// WebGPU kernels: device acquisition, the KernelBackend on WGSL, and the matmul variants for
// benches. The only public entry of src/runtime/gpu. It installs the WGSL sources at load
// (read from disk under plain Node, hence the top-level await).
import { installShaders } from './shader_registry';
import { loadShaderSources } from './shaders';

installShaders(await loadShaderSources());

export { createGpuKernels } from './gpu_kernels';
export type { GpuKernelBackend, GpuKernelsOptions, GpuTensor } from './gpu_kernels';
export { createGpuKernelsFromGpu, createGpuKernelsFromNavigator } from './acquire';
export type { AcquiredGpuKernels } from './acquire';
export { checkKernelLimits, defaultGpu, REQUIRED_LIMITS, requestKernelDevice } from './device';
export type { FeatureLevel, KernelDevice, RequestKernelDeviceOptions } from './device';
export { GpuError, GpuLimitError } from './gpu_errors';
export {
  defaultMatmulVariant, encodeMatmul, MATMUL_VARIANT_INFO, MATMUL_VARIANTS, matmulFlops, matmulVariantInfo,
} from './gpu_matmul';
export type { MatmulVariant, MatmulVariantInfo } from './gpu_matmul';
export { cachedPipelineCount, getPipeline, pipelineKey } from './pipelines';
export { precompileKernels } from './precompile';
export { ATTENTION_MAX_HD, ATTENTION_MAX_SEQ, dispatchConstants } from './kernel_constants';
export type { PrecompileOptions } from './precompile';
export { ENTRY_POINTS, SHADER_NAMES, shaderSource } from './shader_registry';
export type { ShaderName } from './shader_registry';
