// Override constants the backend dispatches each shader with; pipeline cache keys include them,
// so run() and precompileKernels() must agree — both read them here.
import { MATMUL_VARIANT_INFO, MATMUL_VARIANTS } from './gpu_matmul';
import type { Constants } from './pipelines';
import type { ShaderName } from './shader_registry';

export const WG = 64; // threads of the 1-D and row kernels (override WG; a power of two for the tree reductions)
export const ATTENTION_MAX_SEQ = 1024; // override MAX_SEQ of attention.wgsl (scores in workgroup memory)
export const ATTENTION_MAX_HD = 256; // override MAX_HD of attention.wgsl (dk/dv accumulators)
/** embedding.wgsl's BWD_COLS: columns one bwd thread sums (the shader's const; keep the two equal). */
export const EMBEDDING_BWD_COLS = 16;
/** attention.wgsl's SMALL: seq and headDim up to this run a thread per row (register arrays of SMALL). */
export const ATTENTION_SMALL = 64;

/** The override constants run() uses for a shader. */
export function dispatchConstants(shader: ShaderName): Constants {
  const mm = MATMUL_VARIANTS.find((v) => MATMUL_VARIANT_INFO[v].shader === shader);
  if (mm) return MATMUL_VARIANT_INFO[mm].constants;
  if (shader === 'attention') return { WG, MAX_SEQ: ATTENTION_MAX_SEQ, MAX_HD: ATTENTION_MAX_HD };
  return { WG };
}
