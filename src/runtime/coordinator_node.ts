// Node flavour of the live-mode coordinator: one worker_threads Worker per rank running
// rank_node.worker.ts. Workers load TypeScript through tsx's `tsImport` from a data: URL
// bootstrap, which works under `node --import tsx` and inside Vitest's forks pool alike
// (the same trick as comm/node_pool.ts). Node-only: not re-exported from src/runtime/index.ts.

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RankMessage } from './rank';
import { runTrainingWith, type RankPort, type TrainingOptions, type TrainingResult } from './coordinator';

const WORKER_URL = new URL('./rank_node.worker.ts', import.meta.url).href;
/** SwiftShader's Vulkan ICD shipped with Debian's chromium: Dawn's core WebGPU runs on it. */
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

let bootstrapUrl: URL | undefined;
function bootstrap(): URL {
  if (bootstrapUrl !== undefined) return bootstrapUrl;
  const api = createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs');
  const src =
    `const { tsImport } = await import(${JSON.stringify(pathToFileURL(api).href)});\n` +
    `await tsImport(${JSON.stringify(WORKER_URL)}, import.meta.url);\n`;
  return (bootstrapUrl = new URL(`data:text/javascript,${encodeURIComponent(src)}`));
}

function spawnNodeRank(rank: number): RankPort {
  const w = new Worker(bootstrap(), { name: `rank ${rank}` });
  let finished = false;
  return {
    post: (msg) => w.postMessage(msg),
    listen(onMessage, fail) {
      w.on('message', (m: RankMessage) => {
        if (m.type === 'done') finished = true;
        onMessage(m);
      });
      w.on('error', (e) => fail(e));
      w.on('exit', (code) => {
        if (!finished) fail(new Error(`worker exited with code ${code} before finishing`));
      });
    },
    terminate: () => {
      finished = true;
      void w.terminate();
    },
  };
}

/** Make Dawn find a Vulkan driver: the loader reads the real process env, so set it here. */
function prepareDawnEnv(): void {
  const driverUnset = process.env.VK_ICD_FILENAMES === undefined && process.env.VK_DRIVER_FILES === undefined;
  if (driverUnset && existsSync(SWIFTSHADER_ICD)) {
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
}

/** Node flavour of runTraining: worker_threads ranks, CPU kernels or Dawn WebGPU. */
export function runTrainingNode(opts: TrainingOptions): Promise<TrainingResult> {
  if (opts.kernels !== 'cpu') prepareDawnEnv();
  return runTrainingWith(spawnNodeRank, opts, availableParallelism());
}
