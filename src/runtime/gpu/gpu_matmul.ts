// Host side of the numbered matmul variants (shaders/matmul_{1,2,3}_*.wgsl): override constants,
// workgroup counts and params for C[M,N] = op(A)·op(B), and `encodeMatmul` for benchmarks that
// dispatch one matmul of size M×N×K on their own encoder and time it.
import { type MatmulDims, matmulStrides } from '../cpu';
import { GpuError, GpuLimitError } from './gpu_errors';
import { packParams, u32 } from './params';
import { type Constants, getPipeline } from './pipelines';
import type { ShaderName } from './shader_registry';
import { USAGE } from './usage';

export type MatmulVariant = 1 | 2 | 3 | 4;
export const MATMUL_VARIANTS: readonly MatmulVariant[] = [1, 2, 3, 4];

export interface MatmulVariantInfo {
  readonly shader: ShaderName;
  readonly constants: Constants;
  /** C rows × cols computed by one workgroup. */
  readonly block: readonly [rows: number, cols: number];
  readonly about: string;
}

export const MATMUL_VARIANT_INFO: Readonly<Record<MatmulVariant, MatmulVariantInfo>> = {
  1: { shader: 'matmul_1_naive', constants: { WG: 8 }, block: [8, 8], about: 'naive, one thread per C element' },
  2: { shader: 'matmul_2_tiled', constants: { TILE: 16 }, block: [16, 16], about: '16×16 shared-memory tiles' },
  3: {
    shader: 'matmul_3_blocked',
    constants: { WG_X: 16, WG_Y: 16, BK: 16 },
    block: [64, 64],
    about: '64×64 tiles, 4×4 register blocking per thread',
  },
  4: {
    shader: 'matmul_4_direct',
    constants: { WG_X: 8, WG_Y: 8 },
    block: [64, 64],
    about: '8×8 register block per thread straight from storage, no workgroup memory (CPU adapters)',
  },
};

/**
 * The variant to use on an adapter: CPU-backed adapters (SwiftShader, lavapipe / llvmpipe) run the
 * storage-direct 8×8 kernel fastest (bench: 1.4–6× TF.js there, where the tiled kernels' barriers
 * cost more than the reuse buys); named real GPUs the tiled, register-blocked variant 3. Chromium's
 * compatibility adapter over lavapipe reports no names at all, so an anonymous adapter gets 4 too
 * (correct everywhere; at worst slower on a GPU that hides its name).
 */
export function defaultMatmulVariant(info: GPUAdapterInfo | undefined): MatmulVariant {
  if (!info) return 3;
  const desc = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.toLowerCase();
  const anonymous = desc.trim() === '';
  return info.isFallbackAdapter || anonymous || /swiftshader|llvmpipe|lavapipe/.test(desc) ? 4 : 3;
}

export function matmulVariantInfo(variant: number): MatmulVariantInfo {
  const info = MATMUL_VARIANT_INFO[variant as MatmulVariant];
  if (!info) throw new GpuError(`matmul variant must be one of [${MATMUL_VARIANTS.join(', ')}], got ${variant}`);
  return info;
}

/** Uniform bytes of matmul's Params struct (strides fold the trans forms). */
export function matmulParams(d: MatmulDims): ArrayBuffer {
  const s = matmulStrides(d);
  return packParams([u32(d.M), u32(d.N), u32(d.K), u32(s.aM), u32(s.aK), u32(s.bK), u32(s.bN), u32(0)]);
}

export function matmulWorkgroups(device: GPUDevice, variant: MatmulVariant, d: MatmulDims): [number, number] {
  const [rows, cols] = matmulVariantInfo(variant).block;
  const x = Math.ceil(d.N / cols);
  const y = Math.ceil(d.M / rows);
  const max = device.limits.maxComputeWorkgroupsPerDimension;
  if (x > max || y > max) {
    throw new GpuLimitError(
      'maxComputeWorkgroupsPerDimension',
      max,
      Math.max(x, y),
      `matmul ${d.M}×${d.N}×${d.K} (variant ${variant})`,
    );
  }
  return [x, y];
}

export const matmulPipeline = (device: GPUDevice, variant: MatmulVariant) => {
  const info = matmulVariantInfo(variant);
  return getPipeline(device, info.shader, 'main', info.constants);
};

/**
 * Records one matmul as one compute pass on `encoder` (its own params uniform, written at
 * creation). `a`, `b`, `c` are f32 storage buffers laid out as ops.ts says. For benchmarks:
 * time it with `timestampWrites` or with queue.onSubmittedWorkDone around the submit.
 */
export function encodeMatmul(
  device: GPUDevice,
  encoder: GPUCommandEncoder,
  variant: MatmulVariant,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  dims: MatmulDims,
  timestampWrites?: GPUComputePassTimestampWrites,
): void {
  const pipeline = matmulPipeline(device, variant);
  const bytes = matmulParams(dims);
  const params = device.createBuffer({
    label: `matmul ${variant} params`,
    size: bytes.byteLength,
    usage: USAGE.UNIFORM,
    mappedAtCreation: true,
  });
  new Uint8Array(params.getMappedRange()).set(new Uint8Array(bytes));
  params.unmap();
  const [x, y] = matmulWorkgroups(device, variant, dims);
  const label = `matmul ${variant} ${dims.M}×${dims.N}×${dims.K}`;
  const pass = encoder.beginComputePass({ label, timestampWrites });
  pass.setPipeline(pipeline);
  pass.setBindGroup(
    0,
    device.createBindGroup({
      label: `matmul ${variant} bind group`,
      layout: pipeline.getBindGroupLayout(0),
      entries: [a, b, c, params].map((buffer, binding) => ({ binding, resource: { buffer } })),
    }),
  );
  pass.dispatchWorkgroups(x, y);
  pass.end();
}
