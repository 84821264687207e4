// Live training with full activation checkpointing: the recompute ops run on the rank workers
// (CPU reference kernels, Node worker_threads) and change no bits — losses and final parameters
// equal the run without AC, step for step. The runs without AC are shared (test/helpers/live_training.ts).
import { describe, expect, it } from 'vitest';
import { isRecomputeNode } from '../../../src/graph/checkpoint';
import { planTraining } from '../../../src/runtime/training_plan';
import { LIVE_BASE, trainOnce } from '../../helpers/live_training';

const BASE = { ...LIVE_BASE, ranks: 2 };

describe('runTrainingNode with activationCheckpointing', () => {
  it('plans a schedule with recompute nodes only when asked', () => {
    expect(planTraining(BASE).schedule.graph.nodes.some(isRecomputeNode)).toBe(false);
    expect(planTraining({ ...BASE, activationCheckpointing: 'full' }).schedule.graph.nodes.some(isRecomputeNode)).toBe(
      true,
    );
  });

  it.each(['aot_eager', 'aot_eager_autobucketing'] as const)(
    'gives identical losses and final parameters with AC full and none on 2 ranks (%s)',
    async (backend) => {
      const off = await trainOnce({ ranks: 2, backend });
      const on = await trainOnce({ ranks: 2, backend, activationCheckpointing: 'full' });
      expect(off.losses).toHaveLength(3);
      expect(on.losses).toEqual(off.losses);
      expect(on.finalParamsHash).toBe(off.finalParamsHash);
      expect(off.losses[2]).toBeLessThan(off.losses[0]); // it trained
      // the virtual clock sees the recompute: more compute in the AC step
      const computeUs = (r: typeof on) =>
        r.events.filter((e) => e.rank === 0 && e.kind === 'compute').reduce((s, e) => s + e.dur, 0);
      expect(computeUs(on)).toBeGreaterThan(computeUs(off));
    },
    240_000,
  );

  it('gives identical losses and final parameters with selective AC on 2 ranks', async () => {
    const off = await trainOnce({ ranks: 2 });
    const sel = await trainOnce({ ranks: 2, activationCheckpointing: 'selective' });
    expect(sel.losses).toEqual(off.losses);
    expect(sel.finalParamsHash).toBe(off.finalParamsHash);
  }, 240_000);
});
