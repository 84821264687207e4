// Fills the per-device pipeline cache ahead of the first run(), compiling every entry point the
// backend dispatches with the constants it dispatches them with, concurrently
// (createComputePipelineAsync). Without it each op compiles synchronously on first use
// (~1 s per pipeline on SwiftShader).
import { type MatmulVariant, MATMUL_VARIANT_INFO, MATMUL_VARIANTS } from './gpu_matmul';
import { dispatchConstants } from './kernel_constants';
import { compilePipelineAsync } from './pipelines';
import { ENTRY_POINTS, type ShaderName } from './shader_registry';

export interface PrecompileOptions {
  /** Only these shaders (default: all). */
  only?: readonly ShaderName[];
  /** Matmul variants to compile (default: all three). */
  matmulVariants?: readonly MatmulVariant[];
}

export async function precompileKernels(device: GPUDevice, opts: PrecompileOptions = {}): Promise<void> {
  const variants = opts.matmulVariants ?? MATMUL_VARIANTS;
  const wanted = ENTRY_POINTS.filter(([s]) => {
    if (opts.only && !opts.only.includes(s)) return false;
    const mm = MATMUL_VARIANTS.find((v) => MATMUL_VARIANT_INFO[v].shader === s);
    return mm === undefined || variants.includes(mm);
  });
  await Promise.all(wanted.map(([s, e]) => compilePipelineAsync(device, s, e, dispatchConstants(s))));
}
