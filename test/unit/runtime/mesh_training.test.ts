// Live training on device meshes (Node worker_threads, CPU kernels): the tiny model on
// FSDP 2 × TP 2 × HSDP 2 (8 ranks) matches one rank; autobucketing stays bit-identical to aot_eager
// on a TP mesh (and on the 1-D mesh inside it, dp_shard); a rank that fails inside one sub-group
// stops the whole mesh, its rank named. Shared runs: test/helpers/live_training.ts.
import { describe, expect, it } from 'vitest';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import { RankError } from '../../../src/runtime/coordinator';
import { LIVE_BASE as BASE, trainOnce } from '../../helpers/live_training';

describe('live training on a mesh', () => {
  it('matches the 1-rank losses within 1e-4 on HSDP 2 × FSDP 2 × TP 2 (8 ranks), ring collectives', async () => {
    const one = await trainOnce({ ranks: 1 });
    const mesh = await trainOnce({ ranks: 8, tp: 2, dpReplicate: 2, collective: 'ring' });
    expect(mesh.losses).toHaveLength(3);
    mesh.losses.forEach((l, i) => expect(Math.abs(l - one.losses[i]), `step ${i + 1}`).toBeLessThan(1e-4));
    expect(mesh.losses[2]).toBeLessThan(mesh.losses[0]);
    // the virtual clock draws one comm lane per process group
    const streams = new Set(mesh.events.map((e) => e.stream));
    expect([...streams].sort()).toEqual(['comm:dp_replicate', 'comm:dp_shard', 'comm:tp', 'compute']);
  }, 240_000);

  it('gives bit-identical losses and parameters with aot_eager and autobucketing on FSDP 2 × TP 2', async () => {
    const plain = await trainOnce({ ranks: 4, tp: 2 });
    const bucketed = await trainOnce({ ranks: 4, tp: 2, backend: 'aot_eager_autobucketing' });
    expect(bucketed.losses).toEqual(plain.losses);
    expect(bucketed.finalParamsHash).toBe(plain.finalParamsHash);
    // The pass changes time, never math: the virtual clock sees buckets.
    expect(bucketed.events.some((e) => e.bucketId !== undefined)).toBe(true);
    expect(plain.events.some((e) => e.bucketId !== undefined)).toBe(false);
  }, 240_000);

  it('draws a measured mesh step with a comm lane per group (selective AC); fsdp2_eager trains the same', async () => {
    const measured = await runTrainingNode({
      ...BASE,
      ranks: 4,
      tp: 2,
      steps: 2,
      timing: 'measured',
      activationCheckpointing: 'selective',
      backend: 'aot_eager_autobucketing',
    });
    const streams = new Set((measured.wallEvents ?? []).map((e) => e.stream));
    expect([...streams].sort()).toEqual(['comm:dp_shard', 'comm:tp', 'compute']);
    const fsdp2 = await runTrainingNode({ ...BASE, ranks: 4, tp: 2, steps: 2, backend: 'fsdp2_eager' });
    expect(fsdp2.losses).toEqual(measured.losses); // same math whatever the order and the clock
  }, 120_000);

  it('stops every rank of the mesh when one fails, naming it', async () => {
    const run = runTrainingNode({ ...BASE, ranks: 4, tp: 2, steps: 3, injectFault: { rank: 3, step: 2 } });
    await expect(run).rejects.toBeInstanceOf(RankError);
    const message = expect.stringMatching(/^rank 3 failed: .*injected fault at step 2/);
    await expect(run).rejects.toMatchObject({ rank: 3, message });
  }, 120_000);

  it('rejects a mesh the ranks do not factor into, naming the field', async () => {
    await expect(runTrainingNode({ ...BASE, ranks: 4, tp: 3 })).rejects.toThrow(
      /tp · dpReplicate \(3 · 1\) must divide ranks \(4\)/,
    );
    await expect(runTrainingNode({ ...BASE, ranks: 4, tp: 2, globalBatch: 3 })).rejects.toThrow(
      /globalBatch must be divisible by the 2 data-parallel ranks/,
    );
  });
});
