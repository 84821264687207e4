// Live training of step graphs that keep gathered parameters (fsdp_reshard_after_forward never)
// or run as one joint graph (graph_trainer aot_fx_trace): the backward reads the forward's
// gathered tensors instead of gathering again, and the math is the same bit for bit — losses and
// final parameters equal the resharded run's, step for step (CPU reference kernels, worker_threads;
// the resharded run is shared: test/helpers/live_training.ts).
import { describe, expect, it } from 'vitest';
import type { TrainingOptions } from '../../../src/runtime/training_plan';
import { planTraining } from '../../../src/runtime/training_plan';
import { LIVE_BASE, trainOnce } from '../../helpers/live_training';

const BASE: TrainingOptions = { ...LIVE_BASE, ranks: 2 };

const backwardGathers = (o: TrainingOptions) =>
  planTraining(o).schedule.graph.nodes.filter((n) => n.phase === 'backward' && n.kind === 'all_gather').length;

describe('runTrainingNode with kept gathered parameters and the joint graph', () => {
  const base = { ranks: 2, backend: 'aot_eager_autobucketing' } as const;
  const reference = () => trainOnce(base); // the resharded split-graph run

  it('plans no backward all-gather with reshard never, and with aot_fx_trace + memory policy none', () => {
    expect(backwardGathers(BASE)).toBeGreaterThan(0);
    expect(backwardGathers({ ...BASE, reshardAfterForward: 'never' })).toBe(0);
    expect(backwardGathers({ ...BASE, compileMode: 'aot_fx_trace', memoryPolicy: 'none' })).toBe(0);
  });

  it('plans host copies for sac_and_offload (the live run copies them as plain copies)', () => {
    const offload = { ...BASE, compileMode: 'aot_fx_trace', memoryPolicy: 'sac_and_offload' } as const;
    const transfers = planTraining(offload).schedule.graph.nodes.filter((n) => n.attrs?.transfer !== undefined);
    expect(transfers.length).toBeGreaterThan(0);
  });

  it.each([
    ['reshard never', { reshardAfterForward: 'never' }],
    ['reshard never + selective AC', { reshardAfterForward: 'never', activationCheckpointing: 'selective' }],
    ['aot_fx_trace, memory policy none', { compileMode: 'aot_fx_trace', memoryPolicy: 'none' }],
    ['aot_fx_trace, memory policy default', { compileMode: 'aot_fx_trace' }],
    ['aot_fx_trace, memory policy sac_and_offload', { compileMode: 'aot_fx_trace', memoryPolicy: 'sac_and_offload' }],
  ] as const)(
    '%s: the same losses and parameters as the resharded run (autobucketing)',
    async (_, extra) => {
      const [want, run] = [await reference(), await trainOnce({ ...base, ...extra })];
      expect(run.losses).toEqual(want.losses);
      expect(run.finalParamsHash).toBe(want.finalParamsHash);
      expect(want.losses[2]).toBeLessThan(want.losses[0]);
    },
    240_000,
  );
});
