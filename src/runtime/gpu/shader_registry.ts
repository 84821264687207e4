// Names of the WGSL kernel families and the registry their sources are installed into; the
// sources are loaded by ./index.ts (./shaders.ts: Vite's ?raw, or the files under plain Node).
import { GpuError } from './gpu_errors';

export const SHADER_NAMES = [
  'matmul_1_naive',
  'matmul_2_tiled',
  'matmul_3_blocked',
  'matmul_4_direct',
  'embedding',
  'rms_norm',
  'swiglu',
  'attention',
  'add',
  'cross_entropy',
  'adamw',
  'moe_router',
  'moe_rows',
  'grouped_matmul',
] as const;

export type ShaderName = (typeof SHADER_NAMES)[number];

let sources: Readonly<Record<ShaderName, string>> | null = null;

export function installShaders(s: Readonly<Record<ShaderName, string>>): void {
  sources = s;
}

export function shaderSource(name: ShaderName): string {
  if (!sources) {
    throw new GpuError(
      `WGSL sources are not installed (needed '${name}'): import the GPU kernels through ` +
        'src/runtime/gpu (its index.ts loads shaders/*.wgsl), not its files directly',
    );
  }
  const s = sources[name];
  if (typeof s !== 'string') throw new GpuError(`unknown WGSL shader '${name}'; known: [${SHADER_NAMES.join(', ')}]`);
  return s;
}
