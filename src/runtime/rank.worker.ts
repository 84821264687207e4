// Browser shell of a rank: a module Web Worker. Creates its own GPUDevice (WebGPU objects cannot
// cross workers) through src/runtime/gpu, or falls back to the CPU reference kernels and says so
// in the device label; everything else is rank.ts.

import { createCpuKernels } from './cpu';
import { webGpuMissing } from './gpu/index_probe';
import type { KernelBackend } from './kernels';
import type { KernelChoice } from './live_options';
import { createRankServer, type RankInitMessage, type RankMessage, type RankStartMessage } from './rank';
import { FsdpSimError } from '../errors';

interface WorkerScope {
  onmessage: ((ev: MessageEvent<RankInitMessage | RankStartMessage>) => void) | null;
  postMessage(m: RankMessage, transfer?: Transferable[]): void;
}
const scope = self as unknown as WorkerScope;

async function gpuKernels(): Promise<KernelBackend | string> {
  const missing = webGpuMissing();
  if (missing !== undefined) return missing;
  try {
    const gpu = await import('./gpu');
    const kd = await gpu.requestKernelDevice();
    return gpu.createGpuKernels(kd.device, { label: kd.label });
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

async function kernels(choice: KernelChoice): Promise<KernelBackend> {
  if (choice === 'cpu') return createCpuKernels();
  const k = await gpuKernels();
  if (typeof k !== 'string') return k;
  if (choice === 'webgpu') throw new FsdpSimError('no_webgpu', `kernels 'webgpu' requested but no WebGPU device: ${k}`);
  const cpu = createCpuKernels();
  return { ...cpu, label: `${cpu.label} (no WebGPU: ${k})`, noWebGpu: k };
}

const serve = createRankServer({
  post: (m, transfer) => scope.postMessage(m, transfer ?? []),
  kernels,
});
scope.onmessage = (ev) => serve(ev.data);
