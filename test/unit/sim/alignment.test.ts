// End to end: per-rank noise without cross-rank alignment makes autobucketing choose different
// buckets on different ranks, which the simulator reports as a collective mismatch (the hang);
// with alignment every rank plans with the median and the step runs.
import { describe, expect, it } from 'vitest';
import { runBackend } from '../../../src/backends';
import { alignCostModels, jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { simulate } from '../../../src/sim';
import { expectCollectivesAligned, expectNoOverlapPerStream } from './invariants';

describe('simulate with per-rank autobucketing plans', () => {
  const n = 4;
  const graph = buildStepGraph({ model: 'tiny', worldSize: n });
  const base = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const costs = jitteredCostModels(base, n, { jitterPct: 30, seed: 1 });

  it('reports a mismatch, and terminates, when ranks plan with their own estimates', () => {
    const schedules = costs.map((c) => runBackend('aot_eager_autobucketing', graph, c, {}));
    const bucketSets = schedules.map((s) => JSON.stringify(s.buckets.map((b) => b.members)));
    expect(new Set(bucketSets).size).toBeGreaterThan(1);
    const res = simulate({ worldSize: n, schedules, cost: costs });
    const mm = res.mismatch;
    expect(mm).toBeDefined();
    expect(mm!.ranks[0]).not.toBe(mm!.ranks[1]);
    expect(mm!.ops[0]).not.toBe(mm!.ops[1]);
    for (const op of mm!.ops) expect(op).toMatch(/^(all_gather|reduce_scatter) \d+B /);
    // the ranks named really disagree at that sequence number
    const seqOps = mm!.ranks.map((r) => schedules[r].graph.nodes.filter((x) => x.collective?.group === 'dp')[mm!.seq]);
    expect(seqOps[0].collective!.members ?? [seqOps[0].name]).not.toEqual(seqOps[1].collective!.members ?? [seqOps[1].name]);
  });

  it('runs without mismatch when the plans use the aligned (median) estimates', () => {
    const schedule = runBackend('aot_eager_autobucketing', graph, alignCostModels(costs, graph), {});
    const res = simulate({ worldSize: n, schedules: schedule, cost: costs });
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAligned(res, n);
    expect(res.events.some((e) => e.bucketId !== undefined)).toBe(true);
  });
});
