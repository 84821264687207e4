// Live training runs shared by the runtime tests (Node worker_threads, CPU reference kernels). A
// run costs seconds on two cores, and several files compare against the same reference run, so a
// run asked for twice with the same options is trained once: per file, and per worker process
// when files share one module cache (vitest.config.ts, isolate: false). Callers only read results.

import { runTrainingNode } from '../../src/runtime/coordinator_node';
import type { TrainingOptions, TrainingResult } from '../../src/runtime/training_plan';

/** tiny, 3 steps (the third loss sees two optimizer updates), 4 rows a step (one a rank on 4), preset clock. */
export const LIVE_BASE: TrainingOptions = {
  model: 'tiny',
  ranks: 1,
  steps: 3,
  backend: 'aot_eager',
  seed: 5,
  kernels: 'cpu',
  collective: 'direct',
  timing: 'preset',
  hardware: 'h100',
  globalBatch: 4,
};

const runs = new Map<string, Promise<TrainingResult>>();

/** LIVE_BASE with `over`, trained once per process; options with callbacks or signals go to runTrainingNode. */
export function trainOnce(over: Partial<TrainingOptions> = {}): Promise<TrainingResult> {
  const opts = { ...LIVE_BASE, ...over };
  const entries = Object.entries(opts).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [k, v] of entries) {
    if (typeof v === 'function' || v instanceof AbortSignal) {
      throw new Error(`trainOnce: option ${k} cannot key a shared run; call runTrainingNode`);
    }
  }
  const key = JSON.stringify(entries);
  let run = runs.get(key);
  if (run === undefined) runs.set(key, (run = runTrainingNode(opts)));
  return run;
}
