import { describe, expect, it } from 'vitest';
import type { CostModel } from '../../../src/estimate';
import { jitteredCostModels, makeCostModel } from '../../../src/estimate';
import type { GraphNode } from '../../../src/graph/types';
import { simulate } from '../../../src/sim';
import { collective, makeGraph, schedule, tensor, tinyGraph } from './fixtures';
import {
  expectCollectivesAligned,
  expectNoOverlapPerStream,
  expectWaitsAfterCollectives,
  sumCompute,
} from './invariants';

/** compute 10 µs per FLOP-unit; collectives 1 µs per byte: easy to check by hand. */
const unitCost: CostModel = {
  label: 'unit',
  computeUs: (n: GraphNode) => (n.kind === 'compute' || n.kind === 'cast' ? n.flops : 0),
  collectiveUs: (_k, bytes) => bytes,
};

function twoNode() {
  // compute (50 µs) then all_gather of 200 B (200 µs) and its wait, then a compute reading it (30 µs)
  const g = makeGraph(
    [
      { name: 'mm0', kind: 'compute', flops: 50, outputs: ['h'] },
      {
        name: 'ag',
        kind: 'all_gather',
        inputs: ['w.shard'],
        outputs: ['w'],
        collective: collective('all_gather', { inputBytes: 100, outputBytes: 200 }, 2),
      },
      { name: 'ag.wait', kind: 'wait', inputs: ['w'], outputs: ['w.a'], waitOf: 'ag' },
      { name: 'mm1', kind: 'compute', flops: 30, inputs: ['h', 'w.a'], outputs: ['o'] },
    ],
    [
      tensor('w.shard', 100, { persistent: true }),
      tensor('h', 8),
      tensor('w', 200),
      tensor('w.a', 200, { aliasOf: 'w' }),
      tensor('o', 4),
    ],
  );
  return g;
}

describe('simulate', () => {
  it('times compute then an exposed all-gather by hand (program order)', () => {
    const res = simulate({ worldSize: 2, schedules: schedule(twoNode()), cost: unitCost });
    expect(res.symmetric).toBe(true);
    const r0 = res.events.filter((e) => e.rank === 0);
    expect(r0.map((e) => [e.name, e.kind, e.stream, e.start, e.dur])).toEqual([
      ['mm0', 'compute', 'compute', 0, 50],
      ['ag.wait', 'wait', 'compute', 50, 200],
      ['ag', 'all_gather', 'comm:dp', 50, 200],
      ['mm1', 'compute', 'compute', 250, 30],
    ]);
    expect(res.stepUs).toBe(280);
    // exposed communication of AG-then-wait equals the collective's time
    const waited = r0.filter((e) => e.kind === 'wait').reduce((a, e) => a + e.dur, 0);
    expect(waited).toBe(200);
    expect(res.events.filter((e) => e.rank === 1)).toHaveLength(4);
  });

  it('hides an all-gather issued before compute (prefetch): no wait event', () => {
    const g = twoNode();
    const reordered = makeGraph([g.nodes[1], g.nodes[0], g.nodes[2], g.nodes[3]], Object.values(g.tensors));
    const res = simulate({
      worldSize: 2,
      schedules: schedule(reordered),
      cost: { ...unitCost, collectiveUs: () => 40 },
    });
    expect(res.events.filter((e) => e.kind === 'wait')).toHaveLength(0);
    expect(res.stepUs).toBe(80);
  });

  it('tracks memory: persistent always, gathered weight from issue to last reader', () => {
    const res = simulate({ worldSize: 2, schedules: schedule(twoNode()), cost: unitCost, emitRanks: [0] });
    expect(res.memory).toHaveLength(1);
    const m = res.memory[0];
    // 100 persistent; h (8) at 0; w (200) at the AG issue (50); o (4) at 250; h, w freed at 280, o too
    expect(m.t).toEqual([0, 50, 250, 280]);
    expect(m.bytes).toEqual([108, 308, 312, 100]);
    expect(m.peakBytes).toBe(312);
  });

  it('runs collectives on one group in issue order, one at a time', () => {
    const g = makeGraph(
      [
        {
          name: 'a',
          kind: 'all_gather',
          outputs: ['A'],
          collective: collective('all_gather', { inputBytes: 50, outputBytes: 100 }, 2),
        },
        {
          name: 'b',
          kind: 'all_gather',
          outputs: ['B'],
          collective: collective('all_gather', { inputBytes: 25, outputBytes: 50 }, 2),
        },
        { name: 'b.wait', kind: 'wait', inputs: ['B'], waitOf: 'b' },
        { name: 'a.wait', kind: 'wait', inputs: ['A'], waitOf: 'a' },
      ],
      [tensor('A', 100), tensor('B', 50)],
    );
    const res = simulate({ worldSize: 2, schedules: schedule(g), cost: unitCost, emitRanks: [0] });
    const comm = res.events.filter((e) => e.stream === 'comm:dp');
    expect(comm.map((e) => [e.name, e.start, e.dur])).toEqual([
      ['a', 0, 100],
      ['b', 100, 50],
    ]);
    expect(res.stepUs).toBe(150);
  });

  it('keeps the invariants with per-rank jittered costs on the tiny graph', () => {
    const g = tinyGraph(4);
    const base: CostModel = {
      label: 'b',
      computeUs: (n) => (n.kind === 'compute' ? 100 : n.kind === 'cast' ? 5 : 0),
      collectiveUs: (_k, b) => b / 2,
    };
    const costs = jitteredCostModels(base, 4, { jitterPct: 20, seed: 5, straggler: { rank: 2, factor: 2 } });
    const res = simulate({ worldSize: 4, schedules: schedule(g), cost: costs });
    expect(res.symmetric).toBe(false);
    expect(res.mismatch).toBeUndefined();
    expectNoOverlapPerStream(res);
    expectCollectivesAligned(res, 4);
    expectWaitsAfterCollectives(res, g);
    for (let r = 0; r < 4; r++) expect(res.stepUs).toBeGreaterThanOrEqual(sumCompute(res, r));
    // the straggler's compute delays everyone's collectives: rank 0 waits on the first all-gather
    expect(res.events.some((e) => e.rank === 0 && e.kind === 'wait')).toBe(true);
    for (const m of res.memory) expect(m.peakBytes).toBeGreaterThanOrEqual(140);
  });

  it('is deterministic: the same inputs give deep-equal results', () => {
    const g = tinyGraph(4);
    const base = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
    const run = () =>
      simulate({ worldSize: 4, schedules: schedule(g), cost: jitteredCostModels(base, 4, { jitterPct: 10, seed: 1 }) });
    expect(run()).toEqual(run());
  });

  it('reports a mismatch when ranks bucket differently and stops, naming ranks, seq and both ops', () => {
    // rank 0 issues w1 and w2 separately; rank 1 issues one bucket of both
    const ts = [tensor('x', 4), tensor('W1', 100), tensor('W2', 100), tensor('W12', 200)];
    const ag = (name: string, out: string, bytes: number, members?: string[]) => ({
      name,
      kind: 'all_gather' as const,
      outputs: [out],
      collective: {
        ...collective('all_gather', { inputBytes: bytes / 2, outputBytes: bytes }, 2),
        ...(members ? { members } : {}),
      },
    });
    const s0 = makeGraph(
      [
        ag('w1.ag', 'W1', 100),
        { name: 'w1.wait', kind: 'wait', inputs: ['W1'], waitOf: 'w1.ag' },
        ag('w2.ag', 'W2', 100),
        { name: 'w2.wait', kind: 'wait', inputs: ['W2'], waitOf: 'w2.ag' },
      ],
      ts,
    );
    const s1 = makeGraph(
      [
        ag('bucket0', 'W12', 200, ['w1.ag', 'w2.ag']),
        { name: 'bucket0.wait', kind: 'wait', inputs: ['W12'], waitOf: 'bucket0' },
      ],
      ts,
    );
    const res = simulate({ worldSize: 2, schedules: [schedule(s0), schedule(s1)], cost: unitCost });
    expect(res.mismatch).toBeDefined();
    const mm = res.mismatch!;
    expect(mm.seq).toBe(0);
    expect(mm.ranks).toEqual([0, 1]);
    expect(mm.ops[0]).toContain('all_gather 100B');
    expect(mm.ops[0]).toContain('w1.ag');
    expect(mm.ops[1]).toContain('all_gather 200B');
    expect(mm.ops[1]).toContain('w1.ag, w2.ag');
    // nothing ran on the comm stream
    expect(res.events.filter((e) => e.stream !== 'compute')).toHaveLength(0);
  });

  it('reports a rank that never issues a collective another waits on', () => {
    const ts = [tensor('W1', 100)];
    const full = makeGraph(
      [
        {
          name: 'w1.ag',
          kind: 'all_gather',
          outputs: ['W1'],
          collective: collective('all_gather', { inputBytes: 50, outputBytes: 100 }, 2),
        },
        { name: 'w1.wait', kind: 'wait', inputs: ['W1'], waitOf: 'w1.ag' },
      ],
      ts,
    );
    const empty = makeGraph([{ name: 'mm', kind: 'compute', flops: 10 }], ts);
    const res = simulate({ worldSize: 2, schedules: [schedule(full), schedule(empty)], cost: unitCost });
    expect(res.mismatch?.ranks).toEqual([0, 1]);
    expect(res.mismatch?.ops[1]).toContain('finished');
  });

  it('simulates one rank for a shared schedule and cost on 1024 ranks', () => {
    const res = simulate({ worldSize: 1024, schedules: schedule(tinyGraph(1024)), cost: unitCost });
    expect(res.symmetric).toBe(true);
    expect(new Set(res.events.map((e) => e.rank))).toEqual(new Set([0]));
    expect(res.memory).toHaveLength(1);
    const some = simulate({
      worldSize: 1024,
      schedules: schedule(tinyGraph(1024)),
      cost: unitCost,
      emitRanks: [0, 1023],
    });
    expect(some.events.filter((e) => e.rank === 1023).map((e) => [e.name, e.start])).toEqual(
      some.events.filter((e) => e.rank === 0).map((e) => [e.name, e.start]),
    );
  });

  it('rejects per-rank arrays of the wrong length and bad emitRanks', () => {
    const g = schedule(tinyGraph(2));
    expect(() => simulate({ worldSize: 2, schedules: [g], cost: unitCost })).toThrow(
      /schedules must have one entry per rank/,
    );
    expect(() => simulate({ worldSize: 2, schedules: g, cost: unitCost, emitRanks: [2] })).toThrow(/emitRanks/);
  });
});
