// The Node entry of src/runtime/gpu: the kernels on Dawn (the `webgpu` package), for the Node rank
// worker. Dawn's globals (GPUBufferUsage, ...) are installed before the kernels load.
import type { GpuKernelBackend } from './gpu_kernels';

/** Dawn's GPU object must outlive its devices: if it is garbage-collected, the worker segfaults. */
let dawnGpu: GPU | undefined;

/** The WGSL kernels on a Dawn device; throws when Dawn finds no adapter. */
export async function createDawnKernels(): Promise<GpuKernelBackend> {
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const gpu = (dawnGpu ??= create([]) as unknown as GPU);
  const { createGpuKernels, requestKernelDevice } = await import('./index');
  const kd = await requestKernelDevice({ gpu });
  return createGpuKernels(kd.device, { label: kd.label });
}
