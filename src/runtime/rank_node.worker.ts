// Node shell of a rank: a worker_threads worker (spawned by coordinator_node.ts). Uses Dawn's
// `webgpu` package when it finds an adapter (the coordinator sets
// VK_ICD_FILENAMES in the parent process, where the Vulkan loader reads it), else the CPU
// reference kernels, and says which in the device label. Everything else is rank.ts.

import { parentPort } from 'node:worker_threads';
import { createCpuKernels } from './cpu';
import type { KernelBackend } from './kernels';
import type { KernelChoice } from './live_options';
import { createRankServer, type RankInitMessage, type RankStartMessage } from './rank';
import { FsdpSimError } from '../errors';

async function dawnKernels(): Promise<KernelBackend | string> {
  try {
    const { createDawnKernels } = await import('./gpu/index_dawn');
    return await createDawnKernels();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

async function kernels(choice: KernelChoice): Promise<KernelBackend> {
  if (choice === 'cpu') return createCpuKernels();
  const k = await dawnKernels();
  if (typeof k !== 'string') return k;
  if (choice === 'webgpu')
    throw new FsdpSimError('no_webgpu', `kernels 'webgpu' requested but Dawn (webgpu package) gave no device: ${k}`);
  const cpu = createCpuKernels();
  return { ...cpu, label: `${cpu.label} (no WebGPU: ${k})`, noWebGpu: k };
}

if (parentPort === null) throw new FsdpSimError('runtime', 'rank_node.worker.ts must run in a worker_threads Worker');
const port = parentPort;
const serve = createRankServer({ post: (m, transfer) => port.postMessage(m, transfer ?? []), kernels });
port.on('message', (m: RankInitMessage | RankStartMessage) => serve(m));
