// Live training with full activation checkpointing: the recompute ops run on the rank workers
// (CPU reference kernels, Node worker_threads) and change no bits — losses and final parameters
// equal the run without AC, step for step.
import { describe, expect, it } from 'vitest';
import { isRecomputeNode } from '../../../src/graph';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import type { TrainingOptions } from '../../../src/runtime/coordinator';
import { planTraining } from '../../../src/runtime/training_plan';

const BASE: TrainingOptions = {
  model: 'tiny', ranks: 2, steps: 3, backend: 'aot_eager', seed: 5, kernels: 'cpu', collective: 'direct',
  timing: 'preset', hardware: 'h100', globalBatch: 8,
};

describe('runTrainingNode with activationCheckpointing', () => {
  it('plans a schedule with recompute nodes only when asked', () => {
    expect(planTraining(BASE).schedule.graph.nodes.some(isRecomputeNode)).toBe(false);
    expect(planTraining({ ...BASE, activationCheckpointing: 'full' }).schedule.graph.nodes.some(isRecomputeNode)).toBe(true);
  });

  it.each(['aot_eager', 'aot_eager_autobucketing'] as const)(
    'gives identical losses and final parameters with AC full and none on 2 ranks (%s)',
    async (backend) => {
      const off = await runTrainingNode({ ...BASE, backend });
      const on = await runTrainingNode({ ...BASE, backend, activationCheckpointing: 'full' });
      expect(off.losses).toHaveLength(3);
      expect(on.losses).toEqual(off.losses);
      expect(on.finalParamsHash).toBe(off.finalParamsHash);
      expect(off.losses[2]).toBeLessThan(off.losses[0]); // it trained
      // the virtual clock sees the recompute: more compute in the AC step
      const computeUs = (r: typeof on) => r.events.filter((e) => e.rank === 0 && e.kind === 'compute').reduce((s, e) => s + e.dur, 0);
      expect(computeUs(on)).toBeGreaterThan(computeUs(off));
    },
    240_000,
  );

  it('gives identical losses and final parameters with selective AC on 2 ranks', async () => {
    const off = await runTrainingNode(BASE);
    const sel = await runTrainingNode({ ...BASE, activationCheckpointing: 'selective' });
    expect(sel.losses).toEqual(off.losses);
    expect(sel.finalParamsHash).toBe(off.finalParamsHash);
  }, 240_000);
});
