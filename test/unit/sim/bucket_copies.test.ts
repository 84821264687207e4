// The costs a bucketed collective and an overlapped collective add on the compute stream:
// bucket_copies.ts (torch 2.13 bucketing.py's copy-in / copy-out kernels) and contention.ts
// (compute slowed while a collective is in flight), on hand-built schedules checked by hand.
import { describe, expect, it } from 'vitest';
import type { Bucket } from '../../../src/backends/schedule_types';
import type { CostModel } from '../../../src/estimate';
import { HARDWARE_PRESETS, makeCostModel } from '../../../src/estimate';
import type { GraphNode } from '../../../src/graph/types';
import { simulate } from '../../../src/sim';
import { bucketCopies } from '../../../src/sim/bucket_copies';
import { CommBusy } from '../../../src/sim/contention';
import { collective, makeGraph, schedule, tensor } from './fixtures';

/** compute: flops µs; a copy: 1 µs per 10 bytes moved; collectives: 1 µs per byte. */
const cost = (overlapSlowdown = 0): CostModel => ({
  label: 'unit',
  overlapSlowdown,
  computeUs: (n: GraphNode) =>
    n.op === 'copy' ? n.bytesMoved / 10 : n.kind === 'compute' || n.kind === 'cast' ? n.flops : 0,
  collectiveUs: (_k, bytes) => bytes,
});

/**
 * cast → 'a.in'; an all-gather bucket of 'a.in' (the cast's) and 'b.in' (a persistent shard, no
 * cast); its wait; mm; a reduce-scatter bucket of the gradients g1, g2; its wait.
 */
function bucketed() {
  const ag = collective('all_gather', { inputBytes: 300, outputBytes: 600 }, 2);
  const rs = collective('reduce_scatter', { inputBytes: 600, outputBytes: 300 }, 2);
  const g = makeGraph(
    [
      { name: 'a.cast', kind: 'cast', flops: 5, inputs: ['a.fp32'], outputs: ['a.in'] },
      {
        name: 'bucket_0.all_gather',
        kind: 'all_gather',
        inputs: ['a.in', 'b.in'],
        outputs: ['a.full', 'b.full'],
        collective: { ...ag, members: ['a.ag', 'b.ag'] },
      },
      {
        name: 'bucket_0.wait',
        kind: 'wait',
        inputs: ['a.full', 'b.full'],
        outputs: ['a.w', 'b.w'],
        waitOf: 'bucket_0.all_gather',
      },
      { name: 'mm', kind: 'compute', flops: 50, inputs: ['a.w', 'b.w'], outputs: ['g1', 'g2'] },
      {
        name: 'bucket_1.reduce_scatter',
        kind: 'reduce_scatter',
        inputs: ['g1', 'g2'],
        outputs: ['s1', 's2'],
        collective: { ...rs, members: ['g1.rs', 'g2.rs'] },
      },
      {
        name: 'bucket_1.wait',
        kind: 'wait',
        inputs: ['s1', 's2'],
        outputs: ['s1.w', 's2.w'],
        waitOf: 'bucket_1.reduce_scatter',
      },
    ],
    [
      tensor('a.fp32', 200, { persistent: true }),
      tensor('a.in', 100),
      tensor('b.in', 200, { persistent: true }),
      tensor('a.full', 200),
      tensor('b.full', 400),
      tensor('a.w', 200, { aliasOf: 'a.full' }),
      tensor('b.w', 400, { aliasOf: 'b.full' }),
      tensor('g1', 400),
      tensor('g2', 200),
      tensor('s1', 200),
      tensor('s2', 100),
      tensor('s1.w', 200, { aliasOf: 's1' }),
      tensor('s2.w', 100, { aliasOf: 's2' }),
    ],
  );
  const buckets: Bucket[] = [
    { id: 0, kind: 'all_gather', key: 'dp|fp32', node: 'bucket_0.all_gather', members: ['a.ag', 'b.ag'], bytes: 600 },
    {
      id: 1,
      kind: 'reduce_scatter',
      key: 'dp|sum|fp32',
      node: 'bucket_1.reduce_scatter',
      members: ['g1.rs', 'g2.rs'],
      bytes: 600,
    },
  ];
  return schedule(g, buckets);
}

describe('bucketCopies: the copy kernels of torch 2.13 bucketing.py', () => {
  it('all-gather: copy-in of the shards no cast wrote, one copy-out per member of its gathered bytes', () => {
    const c = bucketCopies(bucketed());
    const copyIn = c.copyIn.get('bucket_0.all_gather')!;
    expect([copyIn.op, copyIn.kind, copyIn.inputs, copyIn.bytesMoved]).toEqual(['copy', 'compute', ['b.in'], 400]);
    const outs = c.copyOut.get('bucket_0.wait')!.map((n) => [n.inputs, n.bytesMoved]);
    expect(outs).toEqual([
      [['a.full'], 400],
      [['b.full'], 800],
    ]);
  });

  it('reduce-scatter: one copy-in of every input byte (torch.cat), outputs are views; coalesced copies nothing', () => {
    const c = bucketCopies(bucketed());
    expect(c.copyIn.get('bucket_1.reduce_scatter')!.bytesMoved).toBe(1200);
    expect(c.copyOut.has('bucket_1.wait')).toBe(false);
    const coalesced = bucketCopies({ ...bucketed(), options: { bucket_mode: 'coalesced' } });
    expect(coalesced.copyIn.has('bucket_1.reduce_scatter')).toBe(false);
    expect(coalesced.copyIn.has('bucket_0.all_gather')).toBe(true);
  });

  it('a bucket of one member is the plain collective: no copies', () => {
    const s = bucketed();
    const one = (n: GraphNode): GraphNode =>
      n.collective ? { ...n, collective: { ...n.collective, members: [n.name] } } : n;
    const c = bucketCopies({ ...s, graph: { ...s.graph, nodes: s.graph.nodes.map(one) } });
    expect(c.copyIn.size + c.copyOut.size).toBe(0);
  });

  it('the simulator runs them on the compute stream: copy-in before the collective, copy-outs after the wait', () => {
    const res = simulate({ worldSize: 2, schedules: bucketed(), cost: cost() });
    const r0 = res.events.filter((e) => e.rank === 0).map((e) => [e.name, e.stream, e.start, e.dur]);
    expect(r0).toEqual([
      ['a.cast', 'compute', 0, 5],
      ['bucket_0.all_gather.copy_in', 'compute', 5, 40], // 2 × 200 B / 10
      ['bucket_0.wait', 'compute', 45, 600],
      ['bucket_0.all_gather', 'comm:dp', 45, 600],
      ['bucket_0.wait.copy_out.0', 'compute', 645, 40],
      ['bucket_0.wait.copy_out.1', 'compute', 685, 80],
      ['mm', 'compute', 765, 50],
      ['bucket_1.reduce_scatter.copy_in', 'compute', 815, 120],
      ['bucket_1.wait', 'compute', 935, 600],
      ['bucket_1.reduce_scatter', 'comm:dp', 935, 600],
    ]);
    expect(res.stepUs).toBe(1535);
  });
});

describe('CommBusy: compute slowed while a collective is in flight', () => {
  it('runs at full rate with nothing in flight, at 1 / (1 + slowdown) inside a collective', () => {
    const b = new CommBusy();
    expect(b.finish(0, 10, 0.5)).toBe(10);
    b.add(0, 100);
    expect(b.finish(10, 10, 0.5)).toBe(25);
    expect(b.finish(10, 10, 0)).toBe(20);
  });

  it('stretches only the overlapped part, and counts overlapping collectives of two streams once', () => {
    const b = new CommBusy();
    b.add(20, 40);
    b.add(30, 60); // another stream: busy 20 … 60
    b.add(80, 90);
    // 0–20 full rate (20 done), 20–60 at half rate (20 done), 60–70 full rate (10 done): 50 µs of work
    expect(b.finish(0, 50, 1)).toBe(70);
    // 60–80 full (20), 80–90 half (5), then 5 more at full: 30 µs of work from 60 ends at 95
    expect(b.finish(60, 30, 1)).toBe(95);
  });

  it('forgets collectives that ended before the compute stream got there', () => {
    const b = new CommBusy();
    b.add(0, 10);
    b.prune(10);
    expect(b.finish(0, 5, 1)).toBe(5);
  });

  it("the simulator stretches compute that overlaps a collective, by the cost model's slowdown", () => {
    // mm0 issues nothing: the all-gather starts at 0 and runs 200 µs beside mm0 (100 µs of work)
    const g = makeGraph(
      [
        {
          name: 'ag',
          kind: 'all_gather',
          inputs: ['w.shard'],
          outputs: ['w'],
          collective: collective('all_gather', { inputBytes: 100, outputBytes: 200 }, 2),
        },
        { name: 'mm0', kind: 'compute', flops: 100, outputs: ['h'] },
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
    const dur = (slow: number) => {
      const ev = simulate({ worldSize: 2, schedules: schedule(g), cost: cost(slow) }).events;
      return ev.filter((e) => e.rank === 0 && e.stream === 'compute').map((e) => [e.name, e.start, e.dur]);
    };
    expect(dur(0)).toEqual([
      ['mm0', 0, 100],
      ['ag.wait', 100, 100],
      ['mm1', 200, 30],
    ]);
    expect(dur(0.25)).toEqual([
      ['mm0', 0, 125],
      ['ag.wait', 125, 75],
      ['mm1', 200, 30],
    ]);
  });

  it('every GPU preset carries the cited slowdown, and makeCostModel passes it on', () => {
    for (const hw of Object.values(HARDWARE_PRESETS)) expect(hw.achieved?.overlapSlowdown).toBe(0.189);
    expect(makeCostModel({ hardware: 'h100', network: 'nvlink-ib' }).overlapSlowdown).toBe(0.189);
    const custom = { ...HARDWARE_PRESETS.h100, achieved: undefined };
    expect(makeCostModel({ hardware: custom, network: 'nvlink-ib' }).overlapSlowdown).toBe(0);
  });
});
