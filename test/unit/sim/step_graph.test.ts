// The simulator on the SimpleFSDP step graph from src/graph (program order, as aot_eager runs it),
// on a 1-D, a 2-D (FSDP × TP) and a 3-D (HSDP × TP) mesh.
import { describe, expect, it } from 'vitest';
import { jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { simulate } from '../../../src/sim';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { schedule } from './fixtures';
import { INVARIANT_MESHES, MESH_RANKS, meshGroups } from '../../helpers/meshes';
import {
  expectCollectivesAlignedInGroups,
  expectNoOverlapPerStream,
  expectWaitsAfterCollectives,
  sumCompute,
} from './invariants';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });

describe.each(INVARIANT_MESHES)('simulate on buildStepGraph, %s', (_name, mesh) => {
  const n = MESH_RANKS;
  const graph = buildStepGraph({ model: 'tiny', worldSize: n, mesh });
  const sched = schedule(graph);
  const isColl = (k: string) => k === 'all_gather' || k === 'reduce_scatter' || k === 'all_reduce';

  it('keeps the stream invariants and a step no shorter than the compute', () => {
    const res = simulate({ worldSize: n, schedules: sched, cost });
    expect(res.symmetric).toBe(true);
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAlignedInGroups(res, n, mesh);
    expectWaitsAfterCollectives(res, graph);
    expect(res.stepUs).toBeGreaterThanOrEqual(sumCompute(res, 0));
    // one comm stream per process group, carrying exactly that group's collectives
    for (const group of meshGroups(mesh).keys()) {
      const nColl = graph.nodes.filter((x) => isColl(x.kind) && x.collective!.group === group).length;
      expect(nColl, group).toBeGreaterThan(0);
      expect(
        res.events.filter((e) => e.rank === 0 && e.stream === `comm:${group}`),
        group,
      ).toHaveLength(nColl);
    }
  });

  it('exposes every collective in program order (each wait right after its collective)', () => {
    const res = simulate({ worldSize: n, schedules: sched, cost, emitRanks: [0] });
    const comm = res.events.filter((e) => e.stream.startsWith('comm:')).reduce((a, e) => a + e.dur, 0);
    const waited = res.events.filter((e) => e.kind === 'wait').reduce((a, e) => a + e.dur, 0);
    expect(waited).toBeCloseTo(comm, 6);
    expect(res.stepUs).toBeCloseTo(sumCompute(res, 0) + comm, 6);
  });

  it('has a memory peak above the persistent bytes, equal to the static profile in program order', () => {
    const res = simulate({ worldSize: n, schedules: sched, cost, emitRanks: [0] });
    const profile = scheduleMemoryProfile(graph);
    expect(res.memory[0].peakBytes).toBeGreaterThan(profile.persistentBytes);
    expect(res.memory[0].peakBytes).toBe(profile.peakBytes);
    expect(res.memory[0].bytes[res.memory[0].bytes.length - 1]).toBeGreaterThanOrEqual(profile.persistentBytes);
  });

  it('keeps the invariants with jitter and a straggler on every rank', () => {
    const costs = jitteredCostModels(cost, n, { jitterPct: 15, seed: 42, straggler: { rank: 3, factor: 1.5 } });
    const res = simulate({ worldSize: n, schedules: sched, cost: costs });
    expect(res.symmetric).toBe(false);
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAlignedInGroups(res, n, mesh);
    expectWaitsAfterCollectives(res, graph);
    for (let r = 0; r < n; r++) expect(res.stepUs).toBeGreaterThanOrEqual(sumCompute(res, r));
    expect(res.memory).toHaveLength(n);
  });
});

describe('simulate on buildStepGraph at scale', () => {
  it('simulates llama3-405b on 1024 ranks as one rank', () => {
    const big = buildStepGraph({ model: 'llama3-405b', worldSize: 1024 });
    const res = simulate({ worldSize: 1024, schedules: schedule(big), cost });
    expect(res.symmetric).toBe(true);
    expect(res.memory).toHaveLength(1);
    expect(new Set(res.events.map((e) => e.rank))).toEqual(new Set([0]));
    expect(res.stepUs).toBeGreaterThan(0);
  });
});
