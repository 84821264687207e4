// Start-up progress of a live run: the per-rank bookkeeping (stages only move forward, compile
// counts add up), the pipelines a schedule's ops need (attention sized to the run's shape), and the
// stages a real run reports on Node worker_threads with CPU kernels.
import { describe, expect, it } from 'vitest';
import { runTrainingNode } from '../../../src/runtime/coordinator_node';
import { planTraining } from '../../../src/runtime/training_plan';
import type { StartupProgress } from '../../../src/runtime/startup';
import { kernelUses } from '../../../src/runtime/rank';
import { advanceStartup, initialStartup, startupCounts } from '../../../src/runtime/startup';
import { attentionConstants } from '../../../src/runtime/gpu/kernel_constants';
import { pipelinesFor } from '../../../src/runtime/gpu/precompile';

describe('startup bookkeeping', () => {
  it('moves each rank forward through its stages and counts compiled pipelines', () => {
    let r = initialStartup(2);
    expect(startupCounts(r)).toMatchObject({ spawned: 2, started: 0, ready: 0, compiled: 0, kernels: 0 });
    r = advanceStartup(r, 0, { stage: 'started' }, 10);
    r = advanceStartup(r, 0, { stage: 'compiling', compiled: 0, kernels: 5 }, 20);
    r = advanceStartup(r, 0, { stage: 'compiling', compiled: 3, kernels: 5 }, 30);
    r = advanceStartup(r, 0, { stage: 'compiling', compiled: 2, kernels: 5 }, 31); // late message: counts never fall
    expect(r[0]).toEqual({
      stage: 'compiling',
      compiled: 3,
      kernels: 5,
      at: { spawned: 0, started: 10, compiling: 20 },
    });
    expect(r[1].stage).toBe('spawned');
    r = advanceStartup(r, 0, { stage: 'ready' }, 40);
    expect(r[0]).toMatchObject({ stage: 'ready', compiled: 5 });
    r = advanceStartup(r, 0, { stage: 'started' }, 50); // a stage never goes back
    expect(r[0].stage).toBe('ready');
    expect(r[0].at.started).toBe(10);
    r = advanceStartup(r, 1, { stage: 'stepped' }, 60);
    expect(startupCounts(r)).toMatchObject({ started: 2, compiling: 2, ready: 2, stepped: 1, compiled: 5, kernels: 5 });
    expect(advanceStartup(r, 7, { stage: 'started' }, 1)).toEqual(r); // an unknown rank changes nothing
  });
});

describe('pipelines a schedule needs', () => {
  const plan = planTraining({
    model: 'tiny',
    ranks: 2,
    steps: 1,
    backend: 'aot_eager',
    seed: 0,
    kernels: 'webgpu',
    collective: 'direct',
    timing: 'preset',
    hardware: 'h100',
  });

  it('lists each pipeline once, attention with its arrays sized to the run', () => {
    const specs = pipelinesFor(kernelUses(plan.schedule), 4);
    const keys = specs.map((s) => `${s.shader}:${s.entry}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('matmul_4_direct:main');
    expect(keys.filter((k) => k.startsWith('matmul'))).toEqual(['matmul_4_direct:main']);
    for (const e of ['fwd', 'bwd_d', 'bwd_dq', 'bwd_dkv']) expect(keys).toContain(`attention:${e}`);
    const att = specs.find((s) => s.shader === 'attention')!;
    expect(att.constants).toEqual({ WG: 64, MAX_SEQ: 64, MAX_HD: 64 }); // tiny: seq 32, head dim 16
    expect(keys).toContain('adamw:main');
  });

  it('sizes attention to the next power of two, at least 64, at most the kernel limits', () => {
    expect(attentionConstants({ seq: 100, headDim: 16 })).toEqual({ WG: 64, MAX_SEQ: 128, MAX_HD: 64 });
    expect(attentionConstants({ seq: 1024, headDim: 256 })).toEqual({ WG: 64, MAX_SEQ: 1024, MAX_HD: 256 });
    expect(attentionConstants({ seq: 5000, headDim: 300 })).toEqual({ WG: 64, MAX_SEQ: 1024, MAX_HD: 256 });
  });
});

describe('a run reports its start-up', () => {
  it('every rank goes spawned → started → compiling → ready → stepped, with the kernels it resolved', async () => {
    const seen: StartupProgress[] = [];
    await runTrainingNode({
      model: 'tiny',
      ranks: 2,
      steps: 2,
      backend: 'aot_eager',
      seed: 0,
      kernels: 'cpu',
      collective: 'direct',
      timing: 'preset',
      hardware: 'h100',
      onStartup: (p) => seen.push(p),
    });
    expect(seen[0].ranks.map((r) => r.stage)).toEqual(['spawned', 'spawned']);
    const last = seen[seen.length - 1];
    expect(last.ranks.map((r) => r.stage)).toEqual(['stepped', 'stepped']);
    for (const r of last.ranks) {
      const at = ['spawned', 'started', 'compiling', 'ready', 'stepped'].map((s) => r.at[s as keyof typeof r.at]!);
      expect(at.every((t) => t >= 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    }
    expect(last.kernels).toEqual({ choice: 'cpu', kind: 'cpu', device: 'cpu reference' });
    expect(seen.filter((p) => p.ranks.every((r) => r.stage === 'stepped'))).toHaveLength(1); // nothing after step 1
  });
});
