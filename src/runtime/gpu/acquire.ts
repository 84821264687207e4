// One-call acquisition of a GPU KernelBackend: request a device (core, then compatibility) from
// an injected `GPU` object or navigator.gpu, then build the backend on it, labelled with the
// adapter. Used by the rank workers (browser Worker: navigator.gpu; Node: Dawn's create()).
import { createGpuKernels, type GpuKernelBackend, type GpuKernelsOptions } from './gpu_kernels';
import { type KernelDevice, type RequestKernelDeviceOptions, requestKernelDevice } from './device';

export interface AcquiredGpuKernels extends GpuKernelBackend {
  readonly kernelDevice: KernelDevice;
}

async function createGpuKernelsFromGpu(
  gpu: GPU | undefined,
  opts: RequestKernelDeviceOptions & GpuKernelsOptions = {},
): Promise<AcquiredGpuKernels> {
  const kd = await requestKernelDevice({ ...opts, gpu });
  const backend = createGpuKernels(kd.device, {
    ...opts,
    label: opts.label ?? kd.label,
    timestamps: kd.timestampQuery && opts.timestamps !== false,
  });
  const destroy = backend.destroy;
  return Object.assign(backend, {
    kernelDevice: kd,
    destroy() {
      destroy();
      kd.device.destroy(); // this helper created the device, so it owns it
    },
  });
}

/** navigator.gpu of the page or dedicated Worker. */
export function createGpuKernelsFromNavigator(
  opts: RequestKernelDeviceOptions & GpuKernelsOptions = {},
): Promise<AcquiredGpuKernels> {
  return createGpuKernelsFromGpu(opts.gpu, opts);
}
