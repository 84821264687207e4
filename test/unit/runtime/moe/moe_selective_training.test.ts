// Live training of moe-tiny with selective activation checkpointing (Node worker_threads, CPU
// kernels): the backward reads the saved router picks and all-to-all outputs from the forward and
// recomputes the rest (graph/tape_recompute.ts); the same math in another order, so the losses and
// final parameters equal the run without AC bit for bit, on 4 ranks with ep 2 and on 2 without ep.
import { describe, expect, it } from 'vitest';
import { isRecomputeNode } from '../../../../src/graph/checkpoint';
import { planTraining } from '../../../../src/runtime/training_plan';
import { LIVE_BASE, trainOnce } from '../../../helpers/live_training';

const MOE = { model: 'moe-tiny', steps: 3 } as const;

describe('live training of moe-tiny with selective activation checkpointing', () => {
  it.each([
    [4, 2],
    [2, 1],
  ] as const)(
    'trains the same bits as without AC on %i ranks, ep %i',
    async (ranks, ep) => {
      const plan = planTraining({ ...LIVE_BASE, ...MOE, ranks, ep, activationCheckpointing: 'selective' });
      expect(plan.schedule.graph.nodes.some(isRecomputeNode)).toBe(true);
      const plain = await trainOnce({ ...MOE, ranks, ep });
      const sel = await trainOnce({ ...MOE, ranks, ep, activationCheckpointing: 'selective' });
      expect(sel.losses).toEqual(plain.losses);
      expect(sel.finalParamsHash).toBe(plain.finalParamsHash);
      expect(plain.losses[2]).toBeLessThan(plain.losses[0]); // it trained
    },
    240_000,
  );
});
