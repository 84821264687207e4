// Node flavour of the live-mode coordinator: one worker_threads Worker per rank running
// rank_node.worker.ts, bundled into one plain module first (bundled_entry.ts), which works
// under `node --import tsx` and inside Vitest's forks pool alike. Node-only: not re-exported
// from src/runtime/index.ts.

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { RankMessage } from './rank';
import { runTrainingWith, type RankPort } from './coordinator';
import type { TrainingOptions, TrainingResult } from './training_plan';
import { bundledEntryUrl } from './bundled_entry';

const WORKER_URL = new URL('./rank_node.worker.ts', import.meta.url);
/** SwiftShader's Vulkan ICD shipped with Debian's chromium: Dawn's core WebGPU runs on it. */
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

function spawnNodeRank(url: URL, rank: number): RankPort {
  const w = new Worker(url, { name: `rank ${rank}` });
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
export async function runTrainingNode(opts: TrainingOptions): Promise<TrainingResult> {
  if (opts.kernels !== 'cpu') prepareDawnEnv();
  const url = await bundledEntryUrl(WORKER_URL);
  return runTrainingWith((rank) => spawnNodeRank(url, rank), opts, availableParallelism());
}
