// End to end: per-rank noise without cross-rank alignment makes autobucketing choose different
// buckets on different ranks, which the simulator reports as a collective mismatch (the hang);
// with alignment every rank plans with the median and the step runs. On 1-D, 2-D and 3-D meshes.
// The hang needs torch 2.11's knobs: 2.13's pre-bucketing decides by bytes in graph order, and on
// the tiny model leaves one collective per graph and kind, so per-rank estimates have nothing to reorder.
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_PROFILES, runBackend } from '../../../src/backends';
import { alignCostModels, jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { simulate } from '../../../src/sim';
import { INVARIANT_MESHES, MESH_RANKS } from '../../helpers/meshes';
import { expectCollectivesAlignedInGroups, expectNoOverlapPerStream } from './invariants';

describe.each(INVARIANT_MESHES)('simulate with per-rank autobucketing plans, %s', (_name, mesh) => {
  const n = MESH_RANKS;
  const graph = buildStepGraph({ model: 'tiny', worldSize: n, mesh });
  const base = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const costs = jitteredCostModels(base, n, { jitterPct: 30, seed: 1 });
  const byName = new Map(graph.nodes.map((x) => [x.name, x]));

  it('reports a mismatch, and terminates, when ranks plan with their own estimates (torch 2.11)', () => {
    const torch211 = AUTOBUCKETING_PROFILES['torch-2.11'];
    const schedules = costs.map((c) => runBackend('aot_eager_autobucketing', graph, c, torch211));
    const bucketSets = schedules.map((s) => JSON.stringify(s.buckets.map((b) => b.members)));
    expect(new Set(bucketSets).size).toBeGreaterThan(1);
    const res = simulate({ worldSize: n, schedules, cost: costs });
    const mm = res.mismatch;
    expect(mm).toBeDefined();
    expect(mm!.ranks[0]).not.toBe(mm!.ranks[1]);
    expect(mm!.ops[0]).not.toBe(mm!.ops[1]);
    for (const op of mm!.ops) expect(op).toMatch(/^(all_gather|reduce_scatter|all_reduce) \d+B .*\[.+\]$/);
    // the ranks named really disagree at that sequence number of the group the collective runs on
    const group = byName.get(/\[([^,\]]+)/.exec(mm!.ops[0])![1])!.collective!.group;
    const seqOps = mm!.ranks.map(
      (r) => schedules[r].graph.nodes.filter((x) => x.kind !== 'wait' && x.collective?.group === group)[mm!.seq],
    );
    const members = seqOps.map((x) => x.collective!.members ?? [x.name]);
    expect(members[0]).not.toEqual(members[1]);
  });

  it('plans the same buckets on every rank with the default (2.13) knobs, even unaligned', () => {
    const schedules = costs.map((c) => runBackend('aot_eager_autobucketing', graph, c, {}));
    const bucketSets = schedules.map((s) => JSON.stringify(s.buckets.map((b) => b.members)));
    expect(new Set(bucketSets).size).toBe(1);
    expect(schedules[0].buckets.length).toBeGreaterThan(0);
    expect(simulate({ worldSize: n, schedules, cost: costs }).mismatch).toBeUndefined();
  });

  it('runs without mismatch when the plans use the aligned (median) estimates', () => {
    const schedule = runBackend('aot_eager_autobucketing', graph, alignCostModels(costs, graph), {});
    const res = simulate({ worldSize: n, schedules: schedule, cost: costs });
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAlignedInGroups(res, n, mesh);
    // the plan's buckets run as buckets (with 2.11's knobs tiny on FSDP 4 × TP 2 plans none)
    expect(res.events.some((e) => e.bucketId !== undefined)).toBe(schedule.buckets.length > 0);
  });
});

it('plans buckets from the aligned estimates on FSDP 8, so the bucket check above is not vacuous', () => {
  const graph = buildStepGraph({ model: 'tiny', worldSize: MESH_RANKS, mesh: INVARIANT_MESHES[0][1] });
  const costs = jitteredCostModels(makeCostModel({ hardware: 'h100', network: 'nvlink-ib' }), MESH_RANKS, {
    jitterPct: 30,
    seed: 1,
  });
  const schedule = runBackend('aot_eager_autobucketing', graph, alignCostModels(costs, graph), {});
  expect(schedule.buckets.length).toBeGreaterThan(0);
});
