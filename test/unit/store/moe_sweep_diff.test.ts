// The sweep and the diff on MoE runs, as the panels drive them: the store's sweep over the ep degree
// and over moeLoadImbalance gives runSweep's rows (ep changes the step, skew slows it), and the diff
// the diff table computes from the store's two sides lists every all-to-all on both sides, none of
// them bucketed by B, with B's reasons for it.

import { describe, expect, it } from 'vitest';
import { parseConfigQuery, type SimConfig } from '../../../src/config';
import { parseVary, runSweep } from '../../../src/pipeline/sweep';
import { buildGraph, diffBackends, type SideResult } from '../../../src/store';
import { createAppStore } from '../../../src/store/app_store';

const until = async (f: () => boolean) => {
  for (let i = 0; i < 4000 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(f()).toBe(true);
};

const MOE = 'model=moe-tiny&ranks=4&parallelism.expert_parallel_degree=2';
const configOf = (q: string): SimConfig => {
  const { config, errors } = parseConfigQuery(q);
  expect(errors).toEqual([]);
  return config;
};

async function sweepInStore(base: SimConfig, vary: string) {
  const store = createAppStore();
  store.getState().setConfig(base);
  await store.getState().whenSimulated();
  const axes = [parseVary(vary)];
  store.getState().startSweep(axes);
  await until(() => !store.getState().sweepRunning);
  expect(store.getState().sweepError).toBeNull();
  return { rows: store.getState().sweepRows, axes, store };
}

describe('sweep on an MoE run', () => {
  it("over the ep degree: the rows are runSweep's, and a point loads its ep", async () => {
    const base = configOf(MOE);
    const { rows, axes, store } = await sweepInStore(base, 'parallelism.expert_parallel_degree=1,2,4');
    expect(rows).toEqual(runSweep(base, axes, ['aot_eager', 'aot_eager_autobucketing']));
    expect(rows).toHaveLength(6);
    const a = rows.filter((r) => r.backend === 'aot_eager');
    expect(a.map((r) => r.values['parallelism.expert_parallel_degree'])).toEqual([1, 2, 4]);
    expect(new Set(a.map((r) => r.stepTimeMs)).size).toBe(3); // each ep is a different step
    store.getState().loadSweepPoint(2);
    expect(store.getState().config.parallelism.expert_parallel_degree).toBe(4);
  });

  it('over moeLoadImbalance: a skewed routing never shortens the step', async () => {
    const { rows } = await sweepInStore(configOf(MOE), 'moeLoadImbalance=1,1.5,2');
    for (const backend of ['aot_eager', 'aot_eager_autobucketing']) {
      const t = rows.filter((r) => r.backend === backend).map((r) => r.stepTimeMs);
      expect(t).toHaveLength(3);
      expect(t[1]).toBeGreaterThan(t[0]);
      expect(t[2]).toBeGreaterThan(t[1]);
    }
  });

  it('refuses an ep that does not divide the ranks, naming the field', async () => {
    const store = createAppStore();
    store.getState().setConfig(configOf(MOE));
    store.getState().startSweep([parseVary('parallelism.expert_parallel_degree=2,3')]);
    await until(() => !store.getState().sweepRunning);
    expect(store.getState().sweepError).toMatch(/expert_parallel_degree/);
  });
});

describe('diff on an MoE run', () => {
  it("lists every all-to-all of both sides, unbucketed in B, with B's reasons", async () => {
    const store = createAppStore();
    const cfg = configOf(MOE);
    store.getState().setConfig(cfg);
    await store.getState().whenSimulated();
    const { a, b } = store.getState().sides as { a: SideResult; b: SideResult };
    const graph = buildGraph(cfg);
    const input = (s: SideResult) => ({ backend: s.backend, graph, schedule: s.schedule!, events: s.events });
    const diff = diffBackends(input(a), input(b), 0);
    const rows = diff.rows.filter((r) => r.kind === 'all_to_all');
    const inGraph = graph.nodes.filter((n) => n.collective?.kind === 'all_to_all').map((n) => n.name);
    expect(rows.map((r) => r.name).sort()).toEqual([...inGraph].sort());
    expect(rows).toHaveLength(b.metrics.collectives.all_to_all);
    expect(diff.unmatchedA + diff.unmatchedB).toBe(0);
    for (const r of rows) {
      expect(r.a, r.name).not.toBeNull();
      expect(r.b, r.name).not.toBeNull();
      expect(r.bytes, r.name).toBeGreaterThan(0);
      expect(
        r.reasons.some((x) => x.code === 'bucketed'),
        r.name,
      ).toBe(false);
      expect(r.reasons.length, r.name).toBeGreaterThan(0);
    }
    const bucketed = new Set(b.schedule!.buckets.filter((k) => k.members.length > 1).flatMap((k) => k.members));
    expect(inGraph.filter((n) => bucketed.has(n))).toEqual([]);
  });
});
