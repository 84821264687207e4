// Every backend on every model preset (8 ranks), against the schedule invariants, plus the
// structural claims on llama3-8b. llama3-405b keeps its shapes but runs 16 of its 126 layers here
// (the full model is timed in the bench: npm run bench -- --only scale).
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend, type Schedule } from '../../../src/backends';
import { alignCostModels, jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { MODEL_PRESETS } from '../../../src/model';
import { simulate } from '../../../src/sim';
import { computeMetrics } from '../../../src/trace';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from './helpers';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const graphs = {
  tiny: buildStepGraph({ model: 'tiny', worldSize: 8 }),
  small: buildStepGraph({ model: 'small', worldSize: 8 }),
  'llama3-8b': buildStepGraph({ model: 'llama3-8b', worldSize: 8 }),
  'llama3-70b': buildStepGraph({ model: 'llama3-70b', worldSize: 8 }),
  'llama3-405b (16 layers)': buildStepGraph({ model: { ...MODEL_PRESETS['llama3-405b'], nLayers: 16 }, worldSize: 8 }),
};

describe.each(Object.entries(graphs))('every backend on %s', (_name, g) => {
  it.each(BACKEND_NAMES)('%s returns a valid, deterministic schedule', (backend) => {
    const s = runBackend(backend, g, cost);
    const auto = backend === 'aot_eager_autobucketing';
    // torch's memory budget is a check before each prefetch, not a bound on the result: not asserted
    expectValidSchedule(g, s, auto ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
    expect(runBackend(backend, g, cost)).toEqual(s);
  });
});

describe('cross-rank alignment', () => {
  const g = graphs.small;
  const perRank = jitteredCostModels(cost, 8, { jitterPct: 40, seed: 3 });

  it.each(BACKEND_NAMES)('%s gives every rank the same schedule with the aligned cost model', (backend) => {
    const first = runBackend(backend, g, alignCostModels(perRank, g));
    // rank r aligns the gathered estimates listed from its own first: the median must not care
    const viewOf = (r: number) => [...perRank.slice(r), ...perRank.slice(0, r)];
    for (let r = 1; r < 8; r++) expect(runBackend(backend, g, alignCostModels(viewOf(r), g)), `rank ${r}`).toEqual(first);
  });

  it('lets autobucketing choose different orders or buckets per rank without alignment', () => {
    const big = graphs['llama3-8b'];
    const ranks = jitteredCostModels(cost, 8, { jitterPct: 40, seed: 11 }).slice(0, 4);
    const sig = (s: Schedule) => s.graph.nodes.map((n) => n.name).join(',');
    const sigs = new Set(ranks.map((c) => sig(runBackend('aot_eager_autobucketing', big, c))));
    expect(sigs.size).toBeGreaterThan(1);
  });
});

describe('llama3-8b on 8 ranks', () => {
  const g = graphs['llama3-8b'];
  const colls = (s: Schedule) => s.graph.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter').length;
  const exposedUs = (s: Schedule) => {
    const sim = simulate({ worldSize: 8, schedules: s, cost });
    return computeMetrics(sim.events, sim.memory).exposedCommUs;
  };

  it('autobucketing launches fewer collectives and exposes less communication than aot_eager', () => {
    const a = runBackend('aot_eager', g, cost);
    const b = runBackend('aot_eager_autobucketing', g, cost);
    expect(colls(b)).toBeLessThan(colls(a));
    expect(exposedUs(b)).toBeLessThan(exposedUs(a));
  });

  it('aot_eager places every wait immediately after its collective', () => {
    const s = runBackend('aot_eager', g, cost);
    s.graph.nodes.forEach((n, i) => {
      if (n.collective) expect(s.graph.nodes[i + 1].waitOf).toBe(n.name);
    });
  });

  it('transformer_block makes one all-gather bucket per block in forward and in backward', () => {
    const s = runBackend('transformer_block', g, cost);
    const nodeOf = new Map(g.nodes.map((n) => [n.name, n]));
    for (const phase of ['forward', 'backward'] as const) {
      const blockBuckets = s.buckets.filter((b) => b.kind === 'all_gather' && nodeOf.get(b.members[0])!.phase === phase && nodeOf.get(b.members[0])!.layer !== undefined);
      expect(blockBuckets).toHaveLength(MODEL_PRESETS['llama3-8b'].nLayers);
      const layers = blockBuckets.map((b) => new Set(b.members.map((m) => nodeOf.get(m)!.layer)));
      for (const l of layers) expect(l.size).toBe(1);
      // every per-block all-gather of the phase is in its block's bucket
      const perBlock = g.nodes.filter((n) => n.kind === 'all_gather' && n.phase === phase && n.layer !== undefined).length;
      expect(blockBuckets.reduce((a, b) => a + b.members.length, 0)).toBe(perBlock);
    }
  });
});
