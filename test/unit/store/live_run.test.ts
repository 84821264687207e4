// The plan a live run's Explain panel and memory chart describe is the plan its workers ran: on
// an FSDP 2 × TP 2 run, the 2-D mesh (tp collectives, TP-sharded memory), never a 1-D FSDP-4
// plan; a change of mesh is a new plan, not a cached one. The slice keeps the run's start-up
// progress and resolved kernels, and probes the adapter once.
import { describe, expect, it, vi } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import type { TrainingOptions } from '../../../src/runtime';
import type { StartupProgress } from '../../../src/runtime/startup';
import { livePlanOf, type SideResult } from '../../../src/store';
import { createAppStore } from '../../../src/store/app_store';
import { liveRunOptions } from '../../../src/store/live_run';

/** What the mocked run reports while it starts: rank 0 compiling 3 of 17, rank 1 started. */
const STARTUP: StartupProgress = {
  ranks: [
    { stage: 'compiling', compiled: 3, kernels: 17, at: { spawned: 0, started: 5, compiling: 9 } },
    { stage: 'started', compiled: 0, kernels: 0, at: { spawned: 0, started: 7 } },
  ],
  kernels: { choice: 'auto', kind: 'webgpu', device: 'webgpu: google swiftshader (fallback, core)' },
  elapsedMs: 12,
};

const started: TrainingOptions[] = [];
vi.mock('../../../src/runtime/coordinator', async (load) => ({
  ...(await load<object>()),
  runTraining: async (o: TrainingOptions) => {
    started.push(o);
    o.onStartup?.(STARTUP);
    return { device: 'cpu reference', losses: [], finalParamsHash: '', stepsPerSec: 0, events: [], phases: [] };
  },
}));

const withMesh = (tp: number, ranks = 4): SimConfig => {
  const cfg = defaultConfig();
  return { ...cfg, ranks, parallelism: { ...cfg.parallelism, tensor_parallel_degree: tp } };
};

/** The side a live run leaves behind: its events are all the plan lookup needs besides the config. */
const liveSide = (cfg: SimConfig): SideResult => ({
  title: `${cfg.backendB} (live)`,
  backend: cfg.backendB,
  source: 'live',
  clock: 'live: preset timing',
  events: [],
  memory: [],
  metrics: {} as SideResult['metrics'],
  worldSize: cfg.ranks,
  symmetric: false,
});

const groupsOf = (cfg: SimConfig): string[] => {
  const plan = livePlanOf(liveSide(cfg), cfg);
  if (!plan) throw new Error('no live plan');
  return [...new Set(plan.schedule.graph.nodes.flatMap((n) => (n.collective ? [n.collective.group] : [])))].sort();
};

describe('liveRunOptions', () => {
  it('is what the live slice starts the workers with', async () => {
    const store = createAppStore();
    store.getState().setConfig(withMesh(2));
    await store.getState().startLive({ steps: 3 });
    const cfg = store.getState().config;
    const { signal, onProgress, onStartup, ...opts } = started.at(-1) ?? ({} as TrainingOptions);
    expect(opts).toEqual(liveRunOptions(cfg, cfg.backendB, 3));
    expect(opts).toMatchObject({ ranks: 4, tp: 2, dpReplicate: 1 });
  });
});

describe('live start-up in the store', () => {
  it("keeps each rank's stage and what the kernels resolved to, for the live bar and the headline", async () => {
    const store = createAppStore();
    store.getState().setConfig(withMesh(1, 2));
    await store.getState().startLive({ steps: 1 });
    const live = store.getState().live;
    expect(live.startup).toEqual(STARTUP.ranks);
    expect(live.startupMs).toBe(12);
    expect(live.kernels).toEqual(STARTUP.kernels);
  });

  it("probes the adapter once, the runtime's way: none under Node, and says why", async () => {
    const store = createAppStore();
    expect(store.getState().liveAdapter).toBeNull();
    const a = await store.getState().probeLiveAdapter();
    expect(a).toEqual({ found: false, why: expect.stringMatching(/navigator\.gpu/) });
    expect(store.getState().liveAdapter).toEqual(a);
    expect(await store.getState().probeLiveAdapter()).toBe(a);
  });
});

describe('livePlanOf', () => {
  it('builds an FSDP 2 × TP 2 live run on its 2-D mesh', () => {
    const cfg = withMesh(2);
    const plan = livePlanOf(liveSide(cfg), cfg);
    expect(plan?.schedule.graph.meta.mesh).toEqual({ dpReplicate: 1, dpShard: 2, tp: 2 });
    expect(groupsOf(cfg)).toContain('tp');
  });

  it('keys its cache on the mesh: FSDP 4 and FSDP 2 × TP 2 are two plans', () => {
    const flat = livePlanOf(liveSide(withMesh(1)), withMesh(1));
    const mesh = livePlanOf(liveSide(withMesh(2)), withMesh(2));
    expect(flat?.schedule.graph.meta.mesh ?? { dpReplicate: 1, dpShard: 4, tp: 1 }).toEqual({
      dpReplicate: 1,
      dpShard: 4,
      tp: 1,
    });
    expect(groupsOf(withMesh(1))).not.toContain('tp');
    expect(mesh?.memory[0]?.peakBytes).not.toBe(flat?.memory[0]?.peakBytes);
  });
});

describe('the joint-graph knobs of a live run', () => {
  const knobs = { reshardAfterForward: 'never', compileMode: 'aot_fx_trace', memoryPolicy: 'full' } as const;
  const withKnobs = (k: Partial<SimConfig>): SimConfig => ({ ...withMesh(1), ...k });
  const allGathers = (cfg: SimConfig): number =>
    livePlanOf(liveSide(cfg), cfg)?.schedule.graph.nodes.filter((n) => n.kind === 'all_gather').length ?? -1;

  it('reach runTraining: reshard_after_forward, compile.mode and compile.memory_policy as configured', async () => {
    expect(liveRunOptions(withKnobs(knobs), 'aot_eager', 2)).toMatchObject(knobs);
    const store = createAppStore();
    store.getState().setConfig(withKnobs(knobs));
    await store.getState().startLive({ steps: 2 });
    expect(started.at(-1)).toMatchObject(knobs);
  });

  it('reach the live plan: a run that never reshards gathers no parameter again in its backward', () => {
    const regather = allGathers(withKnobs({ reshardAfterForward: 'always' }));
    const kept = allGathers(withKnobs({ reshardAfterForward: 'never' }));
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(regather);
    expect(livePlanOf(liveSide(withKnobs(knobs)), withKnobs(knobs))).not.toBeNull(); // the joint graph plans too
  });
});
