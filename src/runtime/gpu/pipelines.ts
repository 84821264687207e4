// Pipeline and shader-module cache, per device (a WeakMap keyed by GPUDevice), keyed by kernel
// name, entry point and override constants. Pipelines are created synchronously on first use
// (run() is synchronous); ./precompile.ts fills the cache ahead of time with async creation.
import { shaderSource, type ShaderName } from './shader_registry';

export type Constants = Readonly<Record<string, number>>;

interface DeviceCache {
  modules: Map<ShaderName, GPUShaderModule>;
  pipelines: Map<string, GPUComputePipeline>;
  compileMs: number; // host ms spent in synchronous (first-use) pipeline creation
}

const CACHE = new WeakMap<GPUDevice, DeviceCache>();

function cacheOf(device: GPUDevice): DeviceCache {
  let c = CACHE.get(device);
  if (!c) {
    c = { modules: new Map(), pipelines: new Map(), compileMs: 0 };
    CACHE.set(device, c);
  }
  return c;
}

function pipelineKey(shader: ShaderName, entry: string, constants: Constants = {}): string {
  const keys = Object.keys(constants).sort();
  return `${shader}:${entry}:{${keys.map((k) => `${k}=${constants[k]}`).join(',')}}`;
}

function moduleOf(device: GPUDevice, shader: ShaderName): GPUShaderModule {
  const c = cacheOf(device);
  let m = c.modules.get(shader);
  if (!m) {
    m = device.createShaderModule({ label: `fsdp-sim ${shader}.wgsl`, code: shaderSource(shader) });
    c.modules.set(shader, m);
  }
  return m;
}

function descriptor(
  device: GPUDevice,
  shader: ShaderName,
  entry: string,
  constants: Constants,
): GPUComputePipelineDescriptor {
  return {
    label: `fsdp-sim ${pipelineKey(shader, entry, constants)}`,
    layout: 'auto',
    compute: { module: moduleOf(device, shader), entryPoint: entry, constants: { ...constants } },
  };
}

export function getPipeline(
  device: GPUDevice,
  shader: ShaderName,
  entry: string,
  constants: Constants = {},
): GPUComputePipeline {
  const c = cacheOf(device);
  const key = pipelineKey(shader, entry, constants);
  let p = c.pipelines.get(key);
  if (!p) {
    const t0 = globalThis.performance.now();
    p = device.createComputePipeline(descriptor(device, shader, entry, constants));
    c.compileMs += globalThis.performance.now() - t0;
    c.pipelines.set(key, p);
  }
  return p;
}

/** Host ms this device spent creating pipelines synchronously on first use (the step breakdown's compile phase). */
export function compileMsOf(device: GPUDevice): number {
  return CACHE.get(device)?.compileMs ?? 0;
}

/** Number of cached pipelines on a device (tests assert sharing). */
export function cachedPipelineCount(device: GPUDevice): number {
  return CACHE.get(device)?.pipelines.size ?? 0;
}

/** Compiles one pipeline asynchronously into the cache (no-op when cached). */
export async function compilePipelineAsync(
  device: GPUDevice,
  shader: ShaderName,
  entry: string,
  constants: Constants = {},
): Promise<void> {
  const c = cacheOf(device);
  const key = pipelineKey(shader, entry, constants);
  if (c.pipelines.has(key)) return;
  const p = await device.createComputePipelineAsync(descriptor(device, shader, entry, constants));
  c.pipelines.set(key, p);
}
