// The WebGPU backend inside a dedicated Worker (navigator.gpu there, own device), as the rank
// workers use it.
import { describe, expect, inject, it } from 'vitest';

describe('createGpuKernelsFromNavigator', () => {
  it('runs a WGSL matmul matching the CPU reference inside a dedicated Worker', async () => {
    const worker = new Worker(new URL('./kernel_worker.ts', import.meta.url), { type: 'module' });
    try {
      const reply = await new Promise<{ label?: string; bad?: string[]; error?: string }>((resolve, reject) => {
        worker.onmessage = (ev) => resolve(ev.data);
        worker.onerror = (ev) => reject(new Error(`worker failed to load: ${ev.message}`));
        worker.postMessage({ featureLevel: inject('webgpuFeatureLevel') });
      });
      expect(reply.error).toBeUndefined();
      expect(reply.label).toMatch(/^webgpu: /);
      expect(reply.bad).toEqual([]);
    } finally {
      worker.terminate();
    }
  });
});
