// Live training end to end on Node worker_threads with the CPU reference kernels: N ranks match
// one rank, bucketing never changes the math, runs are reproducible, the loss falls, and a rank
// that throws takes the run down with its rank named.
import { describe, expect, it } from 'vitest';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import { RankError, type TrainingOptions, type TrainingResult } from '../../../src/runtime/coordinator';

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

  it('rejects bad options with a ConfigError naming the field', async () => {
    await expect(runTrainingNode({ ...BASE, ranks: 3 as 2 })).rejects.toThrow(/ranks must be one of \[1, 2, 4, 8\], got 3/);
    await expect(runTrainingNode({ ...BASE, ranks: 4, globalBatch: 6 })).rejects.toThrow(/globalBatch/);
  });
});
