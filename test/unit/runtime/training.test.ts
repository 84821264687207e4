// Live training end to end on Node worker_threads with the CPU reference kernels: N ranks match
// one rank (padded uneven shards too, up to the most ranks a live run takes), runs are
// reproducible, the loss falls, the step breakdown and the measured timeline add up, and a run
// stops on its AbortSignal. Autobucketing's bit-identity and a failing rank are checked on a
// device mesh (mesh_training.test.ts), where they are harder; the runs below that several tests
// read are trained once (test/helpers/live_training.ts).
import { describe, expect, it } from 'vitest';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import type { TrainingResult } from '../../../src/runtime/training_plan';
import type { StepPhases } from '../../../src/runtime/exec';
import { PHASES } from '../../../src/runtime/exec/phases';
import { MAX_LIVE_RANKS } from '../../../src/runtime';
import { planTraining } from '../../../src/runtime/training_plan';
import { LIVE_BASE, trainOnce } from '../../helpers/live_training';

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

/**
 * One measured 2-rank run, read by the clock test and the timeline test. aot_eager: the ratio check
 * below holds to 6 digits there, not with autobucketing's timeline (0.083 vs 0.061 when tried);
 * a measured autobucketing timeline is checked per process group in mesh_training.test.ts.
 */
let measuredRun: Promise<{ res: TrainingResult; progressEvents: number }> | undefined;
const measured = () =>
  (measuredRun ??= (async () => {
    let progressEvents = 0;
    const res = await runTrainingNode({
      ...LIVE_BASE,
      ranks: 2,
      steps: 2,
      timing: 'measured',
      onProgress: (p) => void (progressEvents += p.events?.length ?? 0),
    });
    return { res, progressEvents };
  })());

describe('runTrainingNode', () => {
  it('matches the 1-rank losses within 1e-4 relative on 2 and 4 ranks, direct and ring (same seed, same global batch)', async () => {
    const one = await trainOnce({ ranks: 1 });
    expect(one.losses).toHaveLength(3);
    expect(one.device).toBe('cpu reference');
    for (const ranks of [2, 4] as const) {
      const many = await trainOnce({ ranks });
      expect(many.losses).toHaveLength(3);
      many.losses.forEach((l, i) =>
        expect(relErr(l, one.losses[i]), `${ranks} ranks, step ${i + 1}`).toBeLessThan(1e-4),
      );
    }
    // The ring algorithm sums in another order: other bits, same math.
    const ring = await trainOnce({ ranks: 4, collective: 'ring', backend: 'aot_eager_autobucketing' });
    ring.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `ring, step ${i + 1}`).toBeLessThan(1e-4));
  }, 240_000);

  // The most ranks a live run takes, on a tiny whose every dim-0 (dim 72, ffn 190, vocab 250) is
  // uneven over 16: every shard padded, and rank 15's dim-72 shards (5 rows a rank) all padding.
  // Two steps: the second loss reads parameters the sharded optimizer updated and gathered again.
  it(`trains ${MAX_LIVE_RANKS} ranks with every dim-0 shard padded, equal to 1 rank within 1e-4`, async () => {
    const opts = { steps: 2, globalBatch: MAX_LIVE_RANKS, modelArgs: { dim: 72, ffnDim: 190, vocabSize: 250 } };
    const params = planTraining({ ...LIVE_BASE, ...opts, ranks: MAX_LIVE_RANKS }).schedule.graph.params;
    expect(params.filter((p) => p.shape[0] % MAX_LIVE_RANKS === 0).map((p) => p.name)).toEqual([]);
    const one = await runTrainingNode({ ...LIVE_BASE, ...opts });
    const many = await runTrainingNode({
      ...LIVE_BASE,
      ...opts,
      ranks: MAX_LIVE_RANKS,
      backend: 'aot_eager_autobucketing',
    });
    expect(many.losses).toHaveLength(2);
    many.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `step ${i + 1}`).toBeLessThan(1e-4));
    expect(many.phases).toHaveLength(2);
    for (const step of many.phases) expect(step).toHaveLength(MAX_LIVE_RANKS);
  }, 240_000);

  it('repeats a run exactly with the same seed and differs with another', async () => {
    const a = await trainOnce({ ranks: 2 });
    const b = await runTrainingNode({ ...LIVE_BASE, ranks: 2 });
    expect(b.losses).toEqual(a.losses);
    expect(b.finalParamsHash).toBe(a.finalParamsHash);
    const c = await runTrainingNode({ ...LIVE_BASE, ranks: 2, seed: LIVE_BASE.seed + 1, steps: 1 });
    expect(c.losses[0]).not.toBe(a.losses[0]);
  }, 240_000);

  // Seed 11 at lr 3e-3: the loss first drops under half at step 27 and averages 0.40 of the first
  // over steps 36-40 (measured); 60 steps (the old length) ended at 0.25. One rank: no rendezvous
  // to wait on when the machine is busy (2 ranks took longer under load).
  it('halves the loss on the synthetic progressions within 40 steps', async () => {
    const progress: number[] = [];
    const res = await runTrainingNode({
      ...LIVE_BASE,
      seed: 11,
      steps: 40,
      lr: 3e-3,
      onProgress: (p) => progress.push(p.step),
    });
    expect(progress).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const tail = res.losses.slice(-5).reduce((a, b) => a + b, 0) / 5;
    expect(res.losses[0]).toBeGreaterThan(5); // ≈ ln 256 at init
    expect(tail).toBeLessThan(res.losses[0] / 2);
  }, 240_000);

  it('times the virtual clock with measured node times in measured mode, keeping the preset compute:comm ratio', async () => {
    const preset = await trainOnce({ ranks: 2 });
    const { res, progressEvents } = await measured();
    expect(progressEvents).toBeGreaterThan(0);
    const sum = (r: TrainingResult, pick: (kind: string, op?: string) => boolean) =>
      r.events.filter((e) => e.rank === 0 && pick(e.kind, e.op)).reduce((a, e) => a + e.dur, 0);
    const isKernel = (kind: string, op?: string) => kind === 'compute' && op !== 'cast';
    const isColl = (kind: string) => kind === 'all_gather' || kind === 'reduce_scatter';
    // CPU kernels are far slower than an H100: the measured step is longer...
    expect(sum(res, isKernel)).toBeGreaterThan(10 * sum(preset, isKernel));
    // ...and the network is scaled by the same factor, so the ratio is the preset's.
    const ratio = (r: TrainingResult) => sum(r, isColl) / sum(r, isKernel);
    expect(ratio(res)).toBeCloseTo(ratio(preset), 6);
  }, 240_000);

  it('stops on AbortSignal: rejects with an AbortError after the steps already reported', async () => {
    const ctl = new AbortController();
    const seen: number[] = [];
    const run = runTrainingNode({
      ...LIVE_BASE,
      ranks: 2,
      steps: 1000,
      signal: ctl.signal,
      onProgress: (p) => {
        seen.push(p.step);
        if (p.step === 2) ctl.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen.slice(0, 2)).toEqual([1, 2]);
    expect(seen.length).toBeLessThan(5);
  }, 120_000);

  it('records where every step went on every rank: the phases add up to the step time within 5 %', async () => {
    const res = await trainOnce({ ranks: 4 });
    expect(res.phases).toHaveLength(3);
    const covered = (p: StepPhases) => PHASES.reduce((a, k) => a + p[k], 0);
    res.phases.forEach((ranks, s) => {
      expect(ranks).toHaveLength(4);
      ranks.forEach((p, r) => {
        const where = `step ${s + 1} rank ${r}: ${JSON.stringify(p)}`;
        for (const k of PHASES) expect(p[k], where).toBeGreaterThanOrEqual(0);
        expect(p.stepMs - covered(p), where).toBeCloseTo(p.other, 6);
        expect(p.other, where).toBeGreaterThanOrEqual(-1e-6); // nested spans never count a millisecond twice
        expect(p.compute, where).toBeGreaterThan(0);
        expect(p.collective + p.barrier, where).toBeGreaterThan(0); // 4 ranks all-gather and reduce-scatter
        expect(p.readback + p.upload, where).toBeGreaterThan(0); // collectives move host copies
      });
    });
    // Over the run, what no phase covered (executor bookkeeping; the OS preempting a rank thread on a
    // shared machine lands wherever it strikes) stays under 5 % of the measured step time.
    const rows = res.phases.flat();
    const other = rows.reduce((a, p) => a + p.other, 0);
    const total = rows.reduce((a, p) => a + p.stepMs, 0);
    expect(other / total).toBeLessThanOrEqual(0.05);
    // One rank has nothing to wait for.
    const one = await trainOnce({ ranks: 1 });
    for (const [p] of one.phases) expect(p.barrier).toBe(0);
  }, 240_000);

  it('draws the measured step as this machine ran it: kernels, collectives, readbacks, uploads and barrier waits', async () => {
    const { res } = await measured();
    const wall = res.wallEvents ?? [];
    for (const rank of [0, 1]) {
      const mine = wall.filter((e) => e.rank === rank);
      const kinds = new Set(mine.map((e) => e.kind));
      for (const k of ['compute', 'all_gather', 'reduce_scatter', 'readback', 'upload'])
        expect(kinds, `rank ${rank}`).toContain(k);
      // Host work on the compute stream happens on one thread: no two of its intervals overlap.
      const host = mine.filter((e) => e.stream === 'compute').sort((a, b) => a.start - b.start);
      for (let i = 1; i < host.length; i++)
        expect(host[i].start, host[i].name).toBeGreaterThanOrEqual(host[i - 1].start + host[i - 1].dur - 1e-6);
      // Every event lies inside the rank's measured step.
      const stepUs = res.phases[1][rank].stepMs * 1000;
      for (const e of mine) expect(e.start + e.dur).toBeLessThanOrEqual(stepUs + 1e-6);
    }
    // Some rank waited for the other at a barrier at least once (the two share two cores with everyone else).
    expect(wall.some((e) => e.kind === 'barrier')).toBe(true);
    // Preset timing keeps no wall-clock timeline.
    expect((await trainOnce({ ranks: 2 })).wallEvents).toBeUndefined();
  }, 240_000);

  it('rejects bad options with a ConfigError naming the field', async () => {
    await expect(runTrainingNode({ ...LIVE_BASE, ranks: 17 })).rejects.toThrow(
      /ranks must be an integer in \[1, 16\], got 17/,
    );
    await expect(runTrainingNode({ ...LIVE_BASE, ranks: 0 })).rejects.toThrow(
      /ranks must be an integer in \[1, 16\], got 0/,
    );
    await expect(runTrainingNode({ ...LIVE_BASE, ranks: 4, globalBatch: 6 })).rejects.toThrow(/globalBatch/);
  });
});
