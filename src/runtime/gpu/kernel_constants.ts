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

/** The shape attention's override constants are sized to. */
export interface AttentionShape {
  readonly seq: number;
  readonly headDim: number;
}

/** The next power of two ≥ n, at least ATTENTION_SMALL, at most `max`. */
function arraySize(n: number, max: number): number {
  let s = ATTENTION_SMALL;
  while (s < n) s *= 2;
  return Math.min(s, max);
}

/**
 * attention.wgsl's MAX_SEQ / MAX_HD for a shape: its workgroup arrays sized to the run, not to the
 * largest shape allowed. They only size arrays (loops run to p.seq, p.hd), so the results are the
 * same bits; SwiftShader compiled fwd + bwd_dq + bwd_dkv in ~2.4 s at 1024/256, ~0.4 s at 64/64.
 */
export function attentionConstants(shape: AttentionShape): Constants {
  return { WG, MAX_SEQ: arraySize(shape.seq, ATTENTION_MAX_SEQ), MAX_HD: arraySize(shape.headDim, ATTENTION_MAX_HD) };
}

/** The override constants run() uses for a shader (attention: for `shape`, default the largest allowed). */
export function dispatchConstants(shader: ShaderName, shape?: AttentionShape): Constants {
  const mm = MATMUL_VARIANTS.find((v) => MATMUL_VARIANT_INFO[v].shader === shader);
  if (mm) return MATMUL_VARIANT_INFO[mm].constants;
  if (shader === 'attention') {
    return shape ? attentionConstants(shape) : { WG, MAX_SEQ: ATTENTION_MAX_SEQ, MAX_HD: ATTENTION_MAX_HD };
  }
  return { WG };
}
