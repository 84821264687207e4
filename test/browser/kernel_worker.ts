// Dedicated-Worker side of kernels_worker.test.ts: acquires its own device from the worker's
// navigator.gpu, runs one matmul on WGSL and on the CPU reference, posts the mismatches.
import { createCpuKernels } from '../../src/runtime/cpu';
import { createGpuKernelsFromNavigator } from '../../src/runtime/gpu';
import { compareCase } from './kernel_check';
import { matmulCase } from './kernel_cases';

self.onmessage = async (ev: MessageEvent<{ featureLevel: 'core' | 'compatibility' }>) => {
  try {
    const k = await createGpuKernelsFromNavigator({ featureLevel: ev.data.featureLevel });
    const bad = await compareCase(createCpuKernels(), k, matmulCase(19, 33, 17, false, true, 42));
    (self as unknown as Worker).postMessage({ label: k.label, bad });
    k.destroy();
  } catch (e) {
    (self as unknown as Worker).postMessage({ error: String(e) });
  }
};
