// Fuzz: random SimpleFSDP-shaped graphs (random sizes, groups, world sizes, shuffled program
// orders, flipped matmul flags), random cost models and random knob values through every backend;
// then random step graphs on 1-D, 2-D and 3-D meshes. Each run returns a valid schedule or throws a
// ConfigError; nothing else.
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_DEFAULTS, BACKEND_NAMES, runBackend, type Schedule } from '../../../src/backends';
import { ConfigError } from '../../../src/errors';
import { buildStepGraph, meshSize, type Mesh } from '../../../src/graph';
import type { GraphNode, StepGraph } from '../../../src/graph/types';
import { MODEL_PRESETS } from '../../../src/model';
import { INVARIANT_MESHES } from '../../helpers/meshes';
import { expectValidSchedule, handGraph, rng, rooflineCost } from './helpers';

/** A random topological order of the graph (Kahn's with a random pick among ready nodes). */
function shuffleTopo(g: StepGraph, r: () => number): StepGraph {
  const producer = new Map<string, number>();
  g.nodes.forEach((n, i) => n.outputs.forEach((t) => producer.set(t, i)));
  const byName = new Map(g.nodes.map((n, i) => [n.name, i]));
  const preds = g.nodes.map((n) => {
    const s = new Set<number>();
    for (const t of n.inputs) if (producer.has(t)) s.add(producer.get(t)!);
    if (n.waitOf) s.add(byName.get(n.waitOf)!);
    return s;
  });
  const indeg = preds.map((s) => s.size);
  const succs: number[][] = g.nodes.map(() => []);
  preds.forEach((s, i) => s.forEach((p) => succs[p].push(i)));
  const ready = indeg.flatMap((d, i) => (d === 0 ? [i] : []));
  const out: GraphNode[] = [];
  while (ready.length > 0) {
    const k = Math.floor(r() * ready.length);
    const [x] = ready.splice(k, 1);
    out.push({ ...g.nodes[x], id: out.length });
    for (const s of succs[x]) if (--indeg[s] === 0) ready.push(s);
  }
  return { ...g, nodes: out };
}

function randomGraph(r: () => number): StepGraph {
  const layers = 1 + Math.floor(r() * 5);
  const per = Array.from({ length: 1 + Math.floor(r() * 3) }, () => 1 + Math.floor(r() * 4));
  let g = handGraph({
    layers,
    paramsPerLayer: per,
    worldSize: [1, 2, 4, 8][Math.floor(r() * 4)],
    seed: Math.floor(r() * 1e9),
    rows: [16, 64, 512, 4096][Math.floor(r() * 4)],
    twoGroups: r() < 0.3,
    elementwise: r() < 0.5,
  });
  if (r() < 0.3) {
    // flip some matmul flags: the scheduler must not depend on where compute nodes are
    g = {
      ...g,
      nodes: g.nodes.map((n) => (n.kind === 'compute' && r() < 0.2 ? { ...n, matmulLike: !n.matmulLike } : n)),
    };
  }
  if (r() < 0.4) g = shuffleTopo(g, r);
  return g;
}

function randomKnobs(r: () => number): { knobs: Record<string, number | boolean | string>; valid: boolean } {
  const knobs: Record<string, number | boolean | string> = {};
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  if (r() < 0.5) knobs.max_in_flight_gb = pick([0, 1e-6, 0.001, 0.5, 5, 100]);
  if (r() < 0.5) knobs.max_compute_pre_fetch = pick([0, 1, 2, 5, 200]);
  if (r() < 0.5) knobs.max_coll_distance = pick([0, 1, 3, 200]);
  if (r() < 0.5) knobs.compute_overlap_multipler = pick([0, 0.5, 1, 3]);
  if (r() < 0.5) knobs.max_memory_increase_gb = pick([0, 1e-6, 1, 10]);
  if (r() < 0.5) knobs.max_memory_increase_ratio = pick([0, 0.05, 1]);
  if (r() < 0.5) knobs.bucket_exposed_first = (['true', 'false', 'auto'] as const)[Math.floor(r() * 3)];
  if (r() < 0.3) knobs.collective_bucketing = r() < 0.5;
  if (r() < 0.5) knobs.max_bucket_memory_gb = pick([0, 1e-7, 1e-4, 2]);
  let valid = true;
  if (r() < 0.15) {
    valid = false;
    const bad = pick<[string, number | boolean | string]>([
      ['max_in_flight_gb', -1],
      ['max_compute_pre_fetch', 2.5],
      ['max_coll_distance', -3],
      ['compute_overlap_multipler', Number.NaN],
      ['bucket_exposed_first', 1],
      ['max_bucket_memory_gb', 'big'],
      ['no_such_knob', 1],
      ['max_memory_increase_ratio', Infinity],
    ]);
    knobs[bad[0]] = bad[1];
  }
  return { knobs, valid };
}

describe('every backend under fuzzing', () => {
  it('returns a valid schedule or a ConfigError for 300 random graphs, cost models and knobs', () => {
    const r = rng(20261130);
    let schedules = 0;
    let configErrors = 0;
    let preBucketed = 0; // graphs torch 2.13's default pre-bucketing merged collectives in
    for (let trial = 0; trial < 300; trial++) {
      const g = randomGraph(r);
      const cost = rooflineCost({
        peakFlopsPerUs: [1e6, 1e8, 9.89e8][Math.floor(r() * 3)],
        alphaUs: [0, 5, 50][Math.floor(r() * 3)],
        busBytesPerUs: [1e3, 5e4, 1e6][Math.floor(r() * 3)],
        jitter: r() < 0.3 ? 0.5 : 0,
        rank: Math.floor(r() * 8),
      });
      const { knobs, valid } = randomKnobs(r);
      for (const backend of BACKEND_NAMES) {
        const opts = backend === 'aot_eager_autobucketing' ? knobs : r() < 0.1 ? { bogus: 1 } : {};
        const expectError = backend === 'aot_eager_autobucketing' ? !valid : 'bogus' in opts;
        let s: Schedule | undefined;
        try {
          s = runBackend(backend, g, cost, opts);
        } catch (e) {
          if (!(e instanceof ConfigError)) throw new Error(`trial ${trial} ${backend} threw ${String(e)}`);
          expect(expectError, `trial ${trial} ${backend}: unexpected ${String(e)}`).toBe(true);
          configErrors++;
          continue;
        }
        expect(expectError, `trial ${trial} ${backend}: expected a ConfigError for ${JSON.stringify(opts)}`).toBe(
          false,
        );
        schedules++;
        if (backend === 'aot_eager_autobucketing') {
          preBucketed += s.passStats?.filter((p) => (p.preBucketing?.buckets.length ?? 0) > 0).length ?? 0;
          const o = { ...AUTOBUCKETING_DEFAULTS, ...knobs } as typeof AUTOBUCKETING_DEFAULTS;
          expectValidSchedule(g, s, {
            byteCapBytes: Math.floor(o.max_bucket_memory_gb * 1024 ** 3),
          });
        } else expectValidSchedule(g, s);
      }
    }
    expect(schedules).toBeGreaterThan(700);
    expect(configErrors).toBeGreaterThan(10);
    expect(preBucketed).toBeGreaterThan(50);
  }, 300_000); // 1,200 backend runs, pre-bucketing included: minutes on a loaded machine
});

describe('every backend under fuzzing on meshes', () => {
  // 1-D, 2-D and 3-D meshes of 8 ranks (and 4), random models, activation checkpointing and knobs
  const meshes: readonly Mesh[] = [
    ...INVARIANT_MESHES.map(([, m]) => m),
    { dpReplicate: 2, dpShard: 4, tp: 1 },
    { dpReplicate: 1, dpShard: 2, tp: 4 },
    { dpReplicate: 2, dpShard: 1, tp: 2 },
  ];

  it('returns a valid schedule or a ConfigError for 40 random step graphs on meshes', () => {
    const r = rng(20261201);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    let schedules = 0;
    for (let trial = 0; trial < 40; trial++) {
      const mesh = pick(meshes);
      const model = { ...MODEL_PRESETS[pick(['tiny', 'small'] as const)], nLayers: 1 + Math.floor(r() * 3) };
      const ac = pick(['none', 'selective', 'full'] as const);
      const g = buildStepGraph({ model, worldSize: meshSize(mesh), mesh, activationCheckpointing: ac });
      const cost = rooflineCost({
        alphaUs: pick([0, 5, 50]),
        busBytesPerUs: pick([1e3, 5e4, 1e6]),
        jitter: r() < 0.3 ? 0.5 : 0,
      });
      const { knobs, valid } = randomKnobs(r);
      const what = `trial ${trial} ${JSON.stringify(mesh)} ${model.nLayers} layers AC ${ac}`;
      for (const backend of BACKEND_NAMES) {
        const auto = backend === 'aot_eager_autobucketing';
        let s: Schedule;
        try {
          s = runBackend(backend, g, cost, auto ? knobs : {});
        } catch (e) {
          if (!(e instanceof ConfigError) || !auto || valid) throw new Error(`${what} ${backend} threw ${String(e)}`);
          continue;
        }
        expect(auto && !valid, `${what} ${backend}: expected a ConfigError`).toBe(false);
        // trial 25 (HSDP 2 × 2 × TP 2) once recursed without end: a prefetch path through a wait of
        // a group whose earlier wait was being handled (torch_scheduler.ts, behindWaitInProgress)
        const cap = Math.floor(({ ...AUTOBUCKETING_DEFAULTS, ...knobs }.max_bucket_memory_gb as number) * 1024 ** 3);
        expectValidSchedule(g, s, auto ? { byteCapBytes: cap } : {});
        // a bucket never mixes process groups
        const group = new Map(g.nodes.map((n) => [n.name, n.collective?.group]));
        for (const b of s.buckets) expect(new Set(b.members.map((m) => group.get(m))).size, what).toBe(1);
        schedules++;
      }
    }
    expect(schedules).toBeGreaterThan(130);
  });
});
