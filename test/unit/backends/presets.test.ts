// Every backend on every model preset (8 ranks) and on a 1-D, a 2-D (FSDP × TP) and a 3-D
// (HSDP × TP) mesh, against the schedule invariants, plus the structural claims on llama3-8b.
// llama3-405b keeps its shapes but runs 16 of its 126 layers here, llama3-70b too on the 2-D and
// 3-D meshes (the full models are timed in the bench: npm run bench -- --only scale).
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend, type Schedule } from '../../../src/backends';
import { alignCostModels, jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph, collectivesByGroup, isOneDim, type Mesh } from '../../../src/graph';
import { MODEL_PRESETS, type ModelArgs, type ModelName } from '../../../src/model';
import { simulate } from '../../../src/sim';
import { computeMetrics } from '../../../src/trace';
import { INVARIANT_MESHES, MESH_RANKS } from '../../helpers/meshes';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from './helpers';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const layers = (name: 'llama3-70b' | 'llama3-405b', n: number): ModelArgs => ({ ...MODEL_PRESETS[name], nLayers: n });
const models = (mesh: Mesh): Record<string, ModelName | ModelArgs> => ({
  tiny: 'tiny',
  small: 'small',
  'llama3-8b': 'llama3-8b',
  ...(isOneDim(mesh) ? { 'llama3-70b': 'llama3-70b' } : { 'llama3-70b (16 layers)': layers('llama3-70b', 16) }),
  'llama3-405b (16 layers)': layers('llama3-405b', 16),
});
const graphs = INVARIANT_MESHES.flatMap(([meshName, mesh]) =>
  Object.entries(models(mesh)).map(
    ([name, model]) => [`${name}, ${meshName}`, buildStepGraph({ model, worldSize: MESH_RANKS, mesh })] as const,
  ),
);

describe.each(graphs)('every backend on %s', (_name, g) => {
  it.each(BACKEND_NAMES)('%s returns a valid, deterministic schedule', (backend) => {
    const s = runBackend(backend, g, cost);
    const auto = backend === 'aot_eager_autobucketing';
    // torch's memory budget is a check before each prefetch, not a bound on the result: not asserted
    expectValidSchedule(g, s, auto ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
    expect(runBackend(backend, g, cost)).toEqual(s);
  });
});

describe.each(INVARIANT_MESHES)('cross-rank alignment, %s', (_meshName, mesh) => {
  const g = buildStepGraph({ model: 'small', worldSize: MESH_RANKS, mesh });
  const perRank = jitteredCostModels(cost, MESH_RANKS, { jitterPct: 40, seed: 3 });

  it.each(BACKEND_NAMES)('%s gives every rank the same schedule with the aligned cost model', (backend) => {
    const first = runBackend(backend, g, alignCostModels(perRank, g));
    // rank r aligns the gathered estimates listed from its own first: the median must not care
    const viewOf = (r: number) => [...perRank.slice(r), ...perRank.slice(0, r)];
    for (let r = 1; r < MESH_RANKS; r++) {
      expect(runBackend(backend, g, alignCostModels(viewOf(r), g)), `rank ${r}`).toEqual(first);
    }
  });

  it('lets autobucketing choose different orders or buckets per rank without alignment', () => {
    const big = buildStepGraph({ model: 'llama3-8b', worldSize: MESH_RANKS, mesh });
    const ranks = jitteredCostModels(cost, MESH_RANKS, { jitterPct: 40, seed: 11 }).slice(0, 4);
    const sig = (s: Schedule) => s.graph.nodes.map((n) => n.name).join(',');
    const sigs = new Set(ranks.map((c) => sig(runBackend('aot_eager_autobucketing', big, c))));
    expect(sigs.size).toBeGreaterThan(1);
  });
});

describe.each(INVARIANT_MESHES)('llama3-8b on 8 ranks, %s', (_meshName, mesh) => {
  const g = buildStepGraph({ model: 'llama3-8b', worldSize: MESH_RANKS, mesh });
  const launches = (s: Schedule) => s.graph.nodes.filter((n) => n.collective !== undefined && n.kind !== 'wait').length;
  const exposedUs = (s: Schedule) => {
    const sim = simulate({ worldSize: MESH_RANKS, schedules: s, cost });
    return computeMetrics(sim.events, sim.memory).exposedCommUs;
  };
  // FSDP's parameter all-gathers (TP's activation all-gathers carry no parameter)
  const paramGather = (n: Schedule['graph']['nodes'][number]) => n.kind === 'all_gather' && n.params !== undefined;

  it('autobucketing launches fewer collectives and exposes less communication than aot_eager', () => {
    const a = runBackend('aot_eager', g, cost);
    const b = runBackend('aot_eager_autobucketing', g, cost);
    expect(launches(b)).toBeLessThan(launches(a));
    expect(exposedUs(b)).toBeLessThan(exposedUs(a));
    // it merges only within a process group: no group gains launches
    const before = collectivesByGroup(a.graph.nodes);
    const after = collectivesByGroup(b.graph.nodes);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const [group, c] of Object.entries(after)) {
      for (const k of ['all_gather', 'reduce_scatter', 'all_reduce'] as const) {
        expect(c[k], `${group} ${k}`).toBeLessThanOrEqual(before[group][k]);
      }
    }
  });

  it('aot_eager places every wait immediately after its collective', () => {
    const s = runBackend('aot_eager', g, cost);
    const pairs = s.graph.nodes.flatMap((n, i) =>
      n.collective && n.kind !== 'wait' ? [[n.name, s.graph.nodes[i + 1]?.waitOf]] : [],
    );
    expect(pairs.length).toBeGreaterThan(0);
    expect(pairs.map(([, waitOf]) => waitOf)).toEqual(pairs.map(([name]) => name));
  });

  it('transformer_block makes one parameter all-gather bucket per block in forward and in backward', () => {
    const s = runBackend('transformer_block', g, cost);
    const nodeOf = new Map(g.nodes.map((n) => [n.name, n]));
    for (const phase of ['forward', 'backward'] as const) {
      const blockBuckets = s.buckets.filter((b) => {
        const first = nodeOf.get(b.members[0])!;
        return paramGather(first) && first.phase === phase && first.layer !== undefined;
      });
      expect(blockBuckets).toHaveLength(MODEL_PRESETS['llama3-8b'].nLayers);
      const layers = blockBuckets.map((b) => new Set(b.members.map((m) => nodeOf.get(m)!.layer)));
      for (const l of layers) expect(l.size).toBe(1);
      // every per-block parameter all-gather of the phase is in its block's bucket
      const perBlock = g.nodes.filter((n) => paramGather(n) && n.phase === phase && n.layer !== undefined).length;
      expect(blockBuckets.reduce((a, b) => a + b.members.length, 0)).toBe(perBlock);
    }
  });
});
