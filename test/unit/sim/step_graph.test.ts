// The simulator on the SimpleFSDP step graph from src/graph (program order, as aot_eager runs it).
import { describe, expect, it } from 'vitest';
import { jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { scheduleMemoryProfile, simulate } from '../../../src/sim';
import { schedule } from './fixtures';
import { expectCollectivesAligned, expectNoOverlapPerStream, expectWaitsAfterCollectives, sumCompute } from './invariants';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });

describe('simulate on buildStepGraph', () => {
  const graph = buildStepGraph({ model: 'tiny', worldSize: 4 });
  const sched = schedule(graph);

  it('keeps the stream invariants and a step no shorter than the compute', () => {
    const res = simulate({ worldSize: 4, schedules: sched, cost });
    expect(res.symmetric).toBe(true);
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAligned(res, 4);
    expectWaitsAfterCollectives(res, graph);
    expect(res.stepUs).toBeGreaterThanOrEqual(sumCompute(res, 0));
    const nColl = graph.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter').length;
    expect(res.events.filter((e) => e.rank === 0 && e.stream === 'comm:dp')).toHaveLength(nColl);
  });

  it('exposes every collective in program order (each wait right after its collective)', () => {
    const res = simulate({ worldSize: 4, schedules: sched, cost, emitRanks: [0] });
    const comm = res.events.filter((e) => e.stream === 'comm:dp').reduce((a, e) => a + e.dur, 0);
    const waited = res.events.filter((e) => e.kind === 'wait').reduce((a, e) => a + e.dur, 0);
    expect(waited).toBeCloseTo(comm, 6);
    expect(res.stepUs).toBeCloseTo(sumCompute(res, 0) + comm, 6);
  });

  it('has a memory peak above the persistent bytes, equal to the static profile in program order', () => {
    const res = simulate({ worldSize: 4, schedules: sched, cost, emitRanks: [0] });
    const profile = scheduleMemoryProfile(graph);
    expect(res.memory[0].peakBytes).toBeGreaterThan(profile.persistentBytes);
    expect(res.memory[0].peakBytes).toBe(profile.peakBytes);
    expect(res.memory[0].bytes[res.memory[0].bytes.length - 1]).toBeGreaterThanOrEqual(profile.persistentBytes);
  });

  it('keeps the invariants with jitter and a straggler on every rank', () => {
    const costs = jitteredCostModels(cost, 4, { jitterPct: 15, seed: 42, straggler: { rank: 3, factor: 1.5 } });
    const res = simulate({ worldSize: 4, schedules: sched, cost: costs });
    expect(res.symmetric).toBe(false);
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAligned(res, 4);
    expectWaitsAfterCollectives(res, graph);
    for (let r = 0; r < 4; r++) expect(res.stepUs).toBeGreaterThanOrEqual(sumCompute(res, r));
    expect(res.memory).toHaveLength(4);
  });

  it('simulates llama3-405b on 1024 ranks as one rank', () => {
    const big = buildStepGraph({ model: 'llama3-405b', worldSize: 1024 });
    const res = simulate({ worldSize: 1024, schedules: schedule(big), cost });
    expect(res.symmetric).toBe(true);
    expect(res.memory).toHaveLength(1);
    expect(new Set(res.events.map((e) => e.rank))).toEqual(new Set([0]));
    expect(res.stepUs).toBeGreaterThan(0);
  });
});
