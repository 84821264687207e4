// Acquires a GPUDevice for the kernels: a core adapter first, then a compatibility-mode one
// (`featureLevel: 'compatibility'`, e.g. Chromium's OpenGL ES adapter), with limits requested
// from the adapter (compat's defaults are lower than what the adapter offers). The GPU object
// is injectable so the same code runs on a page, in a dedicated Worker (navigator.gpu there)
// and in Node through Dawn (`create([...])` from the `webgpu` package).
import { GpuError, GpuLimitError } from './gpu_errors';

type FeatureLevel = 'core' | 'compatibility';

export interface KernelDevice {
  readonly device: GPUDevice;
  readonly adapter: GPUAdapter;
  readonly featureLevel: FeatureLevel;
  /** 'webgpu: google swiftshader (fallback, core)' */
  readonly label: string;
  readonly timestampQuery: boolean;
}

export interface RequestKernelDeviceOptions {
  /** The WebGPU entry point; default `navigator.gpu` (page or worker). */
  gpu?: GPU;
  /** 'auto' (default) tries core, then compatibility. */
  featureLevel?: FeatureLevel | 'auto';
  /** Request 'timestamp-query' when the adapter has it (default true). */
  timestamps?: boolean;
  powerPreference?: GPUPowerPreference;
}

/** What the kernels need, each with the kernel that needs it (used in the error message). */
const REQUIRED_LIMITS: readonly { limit: keyof GPUSupportedLimits & string; min: number; why: string }[] = [
  { limit: 'maxComputeInvocationsPerWorkgroup', min: 256, why: 'matmul variants 2/3 (16×16 threads)' },
  { limit: 'maxComputeWorkgroupSizeX', min: 64, why: 'elementwise kernels (64 threads)' },
  { limit: 'maxComputeWorkgroupSizeY', min: 16, why: 'matmul variants 2/3 (16×16 threads)' },
  { limit: 'maxStorageBuffersPerShaderStage', min: 8, why: 'attention bwd_dkv (8 storage buffers)' },
  { limit: 'maxComputeWorkgroupStorageSize', min: 16384, why: 'attention (scores for seq ≤ 1024)' },
  { limit: 'maxComputeWorkgroupsPerDimension', min: 65535, why: 'row-parallel kernels' },
];

/** Limits asked of the adapter: the required ones plus buffer sizes, at the adapter's maximum. */
const REQUESTED_LIMITS = [
  ...REQUIRED_LIMITS.map((r) => r.limit),
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxBindGroups',
] as const;

/** Throws a GpuLimitError naming the first limit below what the kernels need. */
function checkKernelLimits(limits: GPUSupportedLimits): void {
  for (const r of REQUIRED_LIMITS) {
    const found = limits[r.limit] as number;
    if (!(found >= r.min)) throw new GpuLimitError(r.limit, found, r.min, r.why);
  }
}

function defaultGpu(): GPU | undefined {
  return (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
}

/** Why this context (a rank's Web Worker) has no WebGPU entry point, or undefined when it has one. */
export function webGpuMissing(): string | undefined {
  return defaultGpu() === undefined ? 'navigator.gpu is undefined in this worker' : undefined;
}

async function requestAdapter(gpu: GPU, level: FeatureLevel, pp?: GPUPowerPreference): Promise<GPUAdapter | null> {
  try {
    return await gpu.requestAdapter({ featureLevel: level, powerPreference: pp } as GPURequestAdapterOptions);
  } catch {
    return null; // an implementation without featureLevel support rejects; the next level is tried
  }
}

/** Which adapter the levels find first: core, then compatibility (or the one asked for). */
async function firstAdapter(
  gpu: GPU,
  want: FeatureLevel | 'auto' | undefined,
  pp?: GPUPowerPreference,
): Promise<{ adapter: GPUAdapter | null; level: FeatureLevel; levels: FeatureLevel[] }> {
  const levels: FeatureLevel[] =
    want === 'core' ? ['core'] : want === 'compatibility' ? ['compatibility'] : ['core', 'compatibility'];
  for (const l of levels) {
    const adapter = await requestAdapter(gpu, l, pp);
    if (adapter) return { adapter, level: l, levels };
  }
  return { adapter: null, level: 'core', levels };
}

/** The device's feature level: a compat-requested adapter may still be core-capable. */
function featureLevelOf(adapter: GPUAdapter, level: FeatureLevel): FeatureLevel {
  return adapter.features.has('core-features-and-limits') || level === 'core' ? 'core' : 'compatibility';
}

/** The adapter's name and kind, one wording for labels and probes: 'webgpu: google swiftshader (fallback, core)'. */
function adapterLabel(adapter: GPUAdapter, featureLevel: FeatureLevel): { label: string; fallback: boolean } {
  const info = adapter.info;
  const name =
    [info?.vendor, info?.architecture || info?.device].filter(Boolean).join(' ') ||
    info?.description ||
    'unnamed adapter';
  const fallback = !!(info as GPUAdapterInfo & { isFallbackAdapter?: boolean })?.isFallbackAdapter;
  return { label: `webgpu: ${name} (${fallback ? 'fallback, ' : ''}${featureLevel})`, fallback };
}

/** What a context's WebGPU offers the kernels, asked the way the rank workers ask (core, then compatibility). */
export type AdapterProbe =
  | { readonly found: true; readonly label: string; readonly featureLevel: FeatureLevel; readonly fallback: boolean }
  | { readonly found: false; readonly why: string };

/**
 * Probe for the adapter requestKernelDevice would get here, without creating a device: the page
 * names it before a run. The rank workers ask again, each for its own device.
 */
export async function probeAdapter(gpu: GPU | undefined = defaultGpu()): Promise<AdapterProbe> {
  if (!gpu) return { found: false, why: 'navigator.gpu is undefined (this browser exposes no WebGPU)' };
  const { adapter, level } = await firstAdapter(gpu, 'auto');
  if (!adapter) return { found: false, why: 'navigator.gpu found no adapter (core or compatibility)' };
  const featureLevel = featureLevelOf(adapter, level);
  return { found: true, featureLevel, ...adapterLabel(adapter, featureLevel) };
}

export async function requestKernelDevice(opts: RequestKernelDeviceOptions = {}): Promise<KernelDevice> {
  const gpu = opts.gpu ?? defaultGpu();
  if (!gpu) {
    throw new GpuError(
      'navigator.gpu is missing: this context has no WebGPU (Chromium needs --enable-unsafe-webgpu ' +
        'or a compatibility adapter flag; Node needs the `webgpu` package). Use createCpuKernels() instead.',
    );
  }
  const { adapter, level, levels } = await firstAdapter(gpu, opts.featureLevel, opts.powerPreference);
  if (!adapter) {
    throw new GpuError(
      `no WebGPU adapter for featureLevel [${levels.join(', ')}]: the browser exposes navigator.gpu ` +
        'but found no usable GPU (headless Chromium needs --enable-unsafe-webgpu for SwiftShader, or ' +
        '--use-angle=vulkan --use-webgpu-adapter=opengles for compatibility mode). Use createCpuKernels() instead.',
    );
  }
  const featureLevel = featureLevelOf(adapter, level);
  checkKernelLimits(adapter.limits);
  const requiredLimits: Record<string, number> = {};
  for (const name of REQUESTED_LIMITS) requiredLimits[name] = adapter.limits[name] as number;
  const requiredFeatures: GPUFeatureName[] = [];
  const timestampQuery = opts.timestamps !== false && adapter.features.has('timestamp-query');
  if (timestampQuery) requiredFeatures.push('timestamp-query');
  const device = await adapter.requestDevice({ label: 'fsdp-sim kernels', requiredLimits, requiredFeatures });
  checkKernelLimits(device.limits);
  return { device, adapter, featureLevel, timestampQuery, label: adapterLabel(adapter, featureLevel).label };
}
