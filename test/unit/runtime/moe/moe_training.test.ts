// Live training of moe-tiny (Node worker_threads, CPU kernels): the step graph's router, the ep
// all-to-alls, grouped expert GEMMs, combine, shared expert and backward run on the ranks, and expert
// parallel changes only where the rows are computed: 2 and 4 ranks (ep 2, ep 4) match one rank's
// losses for the same global batch, the loss falls, and a rerun is bit-identical, as are other
// schedules of the same math (autobucketing, full activation checkpointing).
import { describe, expect, it } from 'vitest';
import { trainOnce } from '../../../helpers/live_training';

const MOE = { model: 'moe-tiny', steps: 4 } as const;

describe('live training of moe-tiny', () => {
  it('matches one rank within 1e-4 with expert parallel (2 ranks ep 1, 2; 4 ranks ep 2, 4, HSDP 2 ep 2)', async () => {
    const one = await trainOnce({ ...MOE, ranks: 1 });
    expect(one.losses[3]).toBeLessThan(one.losses[0]);
    for (const [ranks, ep, dpReplicate] of [
      [2, 1, 1],
      [2, 2, 1],
      [4, 2, 1],
      [4, 4, 1],
      [4, 2, 2],
    ]) {
      const run = await trainOnce({ ...MOE, ranks, ep, ...(dpReplicate > 1 ? { dpReplicate } : {}) });
      expect(run.losses).toHaveLength(4);
      run.losses.forEach((l, i) =>
        expect(Math.abs(l - one.losses[i]), `${ranks} ranks ep ${ep} hsdp ${dpReplicate} step ${i + 1}`).toBeLessThan(
          1e-4,
        ),
      );
      // the counts and token exchanges run on the ep group's communicator (none without expert parallel)
      expect(
        run.events.some((e) => e.stream === 'comm:ep'),
        `${ranks} ranks ep ${ep}`,
      ).toBe(ep > 1);
    }
  }, 240_000);

  it('trains the same bits with autobucketing and with full activation checkpointing', async () => {
    const plain = await trainOnce({ ...MOE, ranks: 4, ep: 2 });
    for (const over of [{ backend: 'aot_eager_autobucketing' }, { activationCheckpointing: 'full' }] as const) {
      const run = await trainOnce({ ...MOE, ranks: 4, ep: 2, ...over });
      expect(run.losses, JSON.stringify(over)).toEqual(plain.losses);
      expect(run.finalParamsHash, JSON.stringify(over)).toBe(plain.finalParamsHash);
    }
  }, 120_000);

  it('times the MoE nodes in measured mode, with the same losses', async () => {
    const plain = await trainOnce({ ...MOE, ranks: 2, ep: 2 });
    const measured = await trainOnce({ ...MOE, ranks: 2, ep: 2, timing: 'measured' });
    expect(measured.losses).toEqual(plain.losses);
    const timed = new Set((measured.wallEvents ?? []).map((e) => e.name));
    for (const name of ['layers.1.moe.router.topk', 'layers.1.moe.experts.w1', 'layers.1.moe.combine']) {
      expect(timed.has(name), name).toBe(true);
    }
  }, 120_000);

  it('gives bit-identical losses and parameters on a rerun with the same seed', async () => {
    const first = await trainOnce({ ...MOE, ranks: 4, ep: 2 });
    const again = await trainOnce({ ...MOE, ranks: 4, ep: 2, seed: 5, commTimeoutMs: 60_000 });
    expect(again.losses).toEqual(first.losses);
    expect(again.finalParamsHash).toBe(first.finalParamsHash);
  }, 120_000);
});
