// WebGPU kernels: device acquisition, the KernelBackend on WGSL, and the matmul variants for
// benches. The only public entry of src/runtime/gpu. It installs the WGSL sources at load
// (read from disk under plain Node, hence the top-level await).
import { installShaders } from './shader_registry';
import { loadShaderSources } from './shaders';

installShaders(await loadShaderSources());

export { createGpuKernels } from './gpu_kernels';
export type { GpuKernelBackend } from './gpu_kernels';
export { createGpuKernelsFromNavigator } from './acquire';
export { requestKernelDevice } from './device';
export type { KernelDevice } from './device';
export { GpuError, GpuLimitError } from './gpu_errors';
export {
  defaultMatmulVariant,
  encodeMatmul,
  MATMUL_VARIANT_INFO,
  MATMUL_VARIANTS,
} from './gpu_matmul';
export type { MatmulVariant } from './gpu_matmul';
export { cachedPipelineCount } from './pipelines';
export { ENTRY_POINTS, precompileKernels } from './precompile';
