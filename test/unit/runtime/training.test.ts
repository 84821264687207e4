// Live training end to end on Node worker_threads with the CPU reference kernels: N ranks match
// one rank, bucketing never changes the math, runs are reproducible, the loss falls, and a rank
// that throws takes the run down with its rank named.
import { describe, expect, it } from 'vitest';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import { RankError, type TrainingOptions, type TrainingResult } from '../../../src/runtime/coordinator';
import { PHASES, type StepPhases } from '../../../src/runtime/exec';
import { MAX_LIVE_RANKS } from '../../../src/runtime';

const BASE: TrainingOptions = {
  model: 'tiny', ranks: 1, steps: 10, backend: 'aot_eager', seed: 11, kernels: 'cpu', collective: 'direct',
  timing: 'preset', hardware: 'h100', globalBatch: 8,
};

const cache = new Map<string, Promise<TrainingResult>>();
/** Runs are shared between tests (each costs seconds on CPU kernels). */
function train(over: Partial<TrainingOptions>): Promise<TrainingResult> {
  const key = JSON.stringify(over);
  let p = cache.get(key);
  if (p === undefined) cache.set(key, (p = runTrainingNode({ ...BASE, ...over })));
  return p;
}

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

describe('runTrainingNode', () => {
  it('matches the 1-rank losses within 1e-4 relative on 2, 4 and 8 ranks, direct and ring (same seed, same global batch)', async () => {
    const one = await train({ ranks: 1 });
    expect(one.losses).toHaveLength(10);
    expect(one.device).toBe('cpu reference');
    for (const ranks of [2, 4, 8] as const) {
      const many = await train({ ranks });
      expect(many.losses).toHaveLength(10);
      many.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `${ranks} ranks, step ${i + 1}`).toBeLessThan(1e-4));
    }
    // The ring algorithm sums in another order: other bits, same math.
    const ring = await train({ ranks: 4, collective: 'ring', backend: 'aot_eager_autobucketing' });
    ring.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `ring, step ${i + 1}`).toBeLessThan(1e-4));
  }, 240_000);

  it('matches 1 rank with padded shards (vocab 250, ffn 190 do not divide by 4 ranks)', async () => {
    const modelArgs = { vocabSize: 250, ffnDim: 190 };
    const one = await runTrainingNode({ ...BASE, ranks: 1, steps: 3, modelArgs });
    const four = await runTrainingNode({ ...BASE, ranks: 4, steps: 3, modelArgs, backend: 'aot_eager_autobucketing' });
    four.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `step ${i + 1}`).toBeLessThan(1e-4));
  }, 240_000);

  it('gives bit-identical parameters with aot_eager and aot_eager_autobucketing (direct collectives)', async () => {
    const plain = await train({ ranks: 4 });
    const bucketed = await train({ ranks: 4, backend: 'aot_eager_autobucketing' });
    expect(bucketed.losses).toEqual(plain.losses);
    expect(bucketed.finalParamsHash).toBe(plain.finalParamsHash);
    // The pass changes time, never math: the virtual clock sees buckets.
    expect(bucketed.events.some((e) => e.bucketId !== undefined)).toBe(true);
  }, 240_000);

  it('repeats a run exactly with the same seed and differs with another', async () => {
    const a = await train({ ranks: 2 });
    const b = await runTrainingNode({ ...BASE, ranks: 2 });
    expect(b.losses).toEqual(a.losses);
    expect(b.finalParamsHash).toBe(a.finalParamsHash);
    const c = await runTrainingNode({ ...BASE, ranks: 2, seed: 12, steps: 2 });
    expect(c.losses[0]).not.toBe(a.losses[0]);
  }, 240_000);

  it('halves the loss on the synthetic progressions within 60 steps', async () => {
    const progress: number[] = [];
    const res = await runTrainingNode({
      ...BASE, ranks: 1, globalBatch: 4, steps: 60, lr: 3e-3, onProgress: (p) => progress.push(p.step),
    });
    expect(progress).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const tail = res.losses.slice(-5).reduce((a, b) => a + b, 0) / 5;
    expect(res.losses[0]).toBeGreaterThan(5); // ≈ ln 256 at init
    expect(tail).toBeLessThan(res.losses[0] / 2);
  }, 240_000);

  it('rejects with the failing rank named when a worker throws, and stops the others', async () => {
    const run = runTrainingNode({ ...BASE, ranks: 4, steps: 5, injectFault: { rank: 2, step: 2 } });
    await expect(run).rejects.toBeInstanceOf(RankError);
    await expect(run).rejects.toMatchObject({ rank: 2, message: expect.stringMatching(/^rank 2 failed: .*injected fault at step 2/) });
  }, 120_000);

  it('times the virtual clock with measured node times in measured mode, keeping the preset compute:comm ratio', async () => {
    const preset = await train({ ranks: 2 });
    let progressEvents = 0;
    const measured = await runTrainingNode({
      ...BASE, ranks: 2, steps: 2, timing: 'measured', onProgress: (p) => void (progressEvents += p.events?.length ?? 0),
    });
    expect(progressEvents).toBeGreaterThan(0);
    const sum = (r: TrainingResult, pick: (kind: string, op?: string) => boolean) =>
      r.events.filter((e) => e.rank === 0 && pick(e.kind, e.op)).reduce((a, e) => a + e.dur, 0);
    const isKernel = (kind: string, op?: string) => kind === 'compute' && op !== 'cast';
    const isColl = (kind: string) => kind === 'all_gather' || kind === 'reduce_scatter';
    // CPU kernels are far slower than an H100: the measured step is longer...
    expect(sum(measured, isKernel)).toBeGreaterThan(10 * sum(preset, isKernel));
    // ...and the network is scaled by the same factor, so the ratio is the preset's.
    const ratio = (r: TrainingResult) => sum(r, isColl) / sum(r, isKernel);
    expect(ratio(measured)).toBeCloseTo(ratio(preset), 6);
  }, 240_000);

  it('stops on AbortSignal: rejects with an AbortError after the steps already reported', async () => {
    const ctl = new AbortController();
    const seen: number[] = [];
    const run = runTrainingNode({
      ...BASE, ranks: 2, steps: 1000, signal: ctl.signal,
      onProgress: (p) => {
        seen.push(p.step);
        if (p.step === 2) ctl.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen.slice(0, 2)).toEqual([1, 2]);
    expect(seen.length).toBeLessThan(5);
  }, 120_000);

  // an odd prime, a larger one and the most ranks a live run takes: padding on every dim-0 shard
  it.each([3, 7, MAX_LIVE_RANKS])('trains %i ranks (uneven dim-0 shards padded) equal to 1 rank within 1e-4', async (ranks) => {
    const globalBatch = ranks * Math.ceil(8 / ranks); // the default: 8 rounded up to a multiple of the ranks
    const one = await runTrainingNode({ ...BASE, ranks: 1, steps: 3, globalBatch });
    const many = await runTrainingNode({ ...BASE, ranks, steps: 3, globalBatch, backend: 'aot_eager_autobucketing' });
    expect(many.losses).toHaveLength(3);
    many.losses.forEach((l, i) => expect(relErr(l, one.losses[i]), `${ranks} ranks, step ${i + 1}`).toBeLessThan(1e-4));
    expect(many.phases).toHaveLength(3);
    for (const step of many.phases) expect(step).toHaveLength(ranks);
  }, 240_000);

  it('records where every step went on every rank: the phases add up to the step time within 5 %', async () => {
    const res = await train({ ranks: 4 });
    expect(res.phases).toHaveLength(10);
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
    const one = await train({ ranks: 1 });
    for (const [p] of one.phases) expect(p.barrier).toBe(0);
  }, 240_000);

  it('draws the measured step as this machine ran it: kernels, collectives, readbacks, uploads and barrier waits', async () => {
    const res = await runTrainingNode({ ...BASE, ranks: 2, steps: 2, timing: 'measured', backend: 'aot_eager_autobucketing' });
    const wall = res.wallEvents ?? [];
    for (const rank of [0, 1]) {
      const mine = wall.filter((e) => e.rank === rank);
      const kinds = new Set(mine.map((e) => e.kind));
      for (const k of ['compute', 'all_gather', 'reduce_scatter', 'readback', 'upload']) expect(kinds, `rank ${rank}`).toContain(k);
      // Host work on the compute stream happens on one thread: no two of its intervals overlap.
      const host = mine.filter((e) => e.stream === 'compute').sort((a, b) => a.start - b.start);
      for (let i = 1; i < host.length; i++) expect(host[i].start, host[i].name).toBeGreaterThanOrEqual(host[i - 1].start + host[i - 1].dur - 1e-6);
      // Every event lies inside the rank's measured step.
      const stepUs = res.phases[1][rank].stepMs * 1000;
      for (const e of mine) expect(e.start + e.dur).toBeLessThanOrEqual(stepUs + 1e-6);
    }
    // Some rank waited for the other at a barrier at least once (the two share two cores with everyone else).
    expect(wall.some((e) => e.kind === 'barrier')).toBe(true);
    // Preset timing keeps no wall-clock timeline.
    expect((await train({ ranks: 2 })).wallEvents).toBeUndefined();
  }, 240_000);

  it('rejects bad options with a ConfigError naming the field', async () => {
    await expect(runTrainingNode({ ...BASE, ranks: 17 })).rejects.toThrow(/ranks must be an integer in \[1, 16\], got 17/);
    await expect(runTrainingNode({ ...BASE, ranks: 0 })).rejects.toThrow(/ranks must be an integer in \[1, 16\], got 0/);
    await expect(runTrainingNode({ ...BASE, ranks: 4, globalBatch: 6 })).rejects.toThrow(/globalBatch/);
  });
});
