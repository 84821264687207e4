// executeStep: bucketed collectives follow the fixed bucket layout, storage is released after its
// last use, optimizer results become the next step's state, and a real tiny step trains.
import { describe, expect, it } from 'vitest';
import type { Schedule } from '../../../src/backends/schedule_types';
import { buildStepGraph } from '../../../src/graph';
import { LOSS, TARGETS, TOKENS, paramTensorIds } from '../../../src/graph/ops';
import type { GraphNode, StepGraph, TensorInfo } from '../../../src/graph/types';
import { createCommInit, RankComm } from '../../../src/runtime/comm';
import { createCpuKernels } from '../../../src/runtime/cpu';
import type { CpuTensor } from '../../../src/runtime/cpu/cpu_kernels';
import { batchRows } from '../../../src/runtime/data';
import { executeStep } from '../../../src/runtime/exec';
import type { ExecComm } from '../../../src/runtime/exec/collectives';
import type { DeviceTensor, KernelBackend } from '../../../src/runtime/kernels';
import { initRankState } from '../../../src/runtime/rank';
import { graphNode } from '../../helpers/graph_node';

/** CPU kernels that remember live tensors and every op's inputs. */
function spyKernels() {
  const cpu = createCpuKernels();
  const live = new Set<DeviceTensor>();
  const runs: { op: string; inputs: Float32Array[] }[] = [];
  const k: KernelBackend = {
    ...cpu,
    create(id, len, type) {
      const t = cpu.create(id, len, type);
      live.add(t);
      return t;
    },
    run(op, attrs, inputs, outputs, step) {
      runs.push({ op, inputs: inputs.map((t) => Float32Array.from((t as CpuTensor).data)) });
      cpu.run(op, attrs, inputs, outputs, step);
    },
    release(t) {
      expect(live.has(t), `double release of '${t.id}'`).toBe(true);
      live.delete(t);
    },
  };
  return { k, live, runs };
}

const t = (id: string, shape: number[], extra: Partial<TensorInfo> = {}): TensorInfo => ({
  id,
  shape,
  dtype: extra.dtype ?? 'fp32',
  bytes: shape.reduce((a, b) => a * b, 1) * 4,
  ...extra,
});
const node = (
  id: number,
  n: Partial<GraphNode> & Pick<GraphNode, 'name' | 'kind' | 'op' | 'inputs' | 'outputs'>,
): GraphNode => graphNode({ id, ...n });

/** Two params, a [4,2] and b [2,3], on 2 ranks: one AG bucket, one RS bucket, AdamW, a loss. */
function bucketGraph(): StepGraph {
  const A = paramTensorIds('a');
  const B = paramTensorIds('b');
  const tensors: Record<string, TensorInfo> = {};
  for (const x of [
    t(A.shard, [2, 2], { persistent: true }),
    t(A.m, [2, 2], { persistent: true }),
    t(A.v, [2, 2], { persistent: true }),
    t(B.shard, [1, 3], { persistent: true }),
    t(B.m, [1, 3], { persistent: true }),
    t(B.v, [1, 3], { persistent: true }),
    t('ag.a', [4, 2]),
    t('ag.b', [2, 3]),
    t('a.full', [4, 2], { aliasOf: 'ag.a' }),
    t('b.full', [2, 3], { aliasOf: 'ag.b' }),
    t('a.grad', [4, 2]),
    t('b.grad', [2, 3]),
    t('rs.a', [2, 2]),
    t('rs.b', [1, 3]),
    t(A.gradShard, [2, 2], { aliasOf: 'rs.a' }),
    t(B.gradShard, [1, 3], { aliasOf: 'rs.b' }),
    t(TARGETS, [2], { dtype: 'i32', persistent: true }),
    t(LOSS, [1]),
    t(A.shardNext, [2, 2]),
    t(A.mNext, [2, 2]),
    t(A.vNext, [2, 2]),
    t(B.shardNext, [1, 3]),
    t(B.mNext, [1, 3]),
    t(B.vNext, [1, 3]),
  ])
    tensors[x.id] = x;
  const coll = (kind: 'all_gather' | 'reduce_scatter') => ({
    kind,
    group: 'dp',
    groupSize: 2,
    dtype: 'fp32' as const,
    inputBytes: 0,
    outputBytes: 0,
    reduceOp: 'avg' as const,
    members: [`a.${kind}`, `b.${kind}`],
  });
  const adam = { lr: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 };
  const nodes: GraphNode[] = [
    node(0, {
      name: 'ag_bucket',
      kind: 'all_gather',
      op: 'all_gather_into_tensor',
      inputs: [A.shard, B.shard],
      outputs: ['ag.a', 'ag.b'],
      collective: coll('all_gather'),
    }),
    node(1, {
      name: 'ag_bucket.wait',
      kind: 'wait',
      op: 'wait_tensor',
      inputs: ['ag.a', 'ag.b'],
      outputs: ['a.full', 'b.full'],
      waitOf: 'ag_bucket',
    }),
    node(2, {
      name: 'ga',
      kind: 'compute',
      op: 'add',
      inputs: ['a.full', 'a.full'],
      outputs: ['a.grad'],
      attrs: { n: 8 },
    }),
    node(3, {
      name: 'gb',
      kind: 'compute',
      op: 'add',
      inputs: ['b.full', 'b.full'],
      outputs: ['b.grad'],
      attrs: { n: 6 },
    }),
    node(4, {
      name: 'ce',
      kind: 'compute',
      op: 'cross_entropy',
      inputs: ['b.full', TARGETS],
      outputs: [LOSS],
      attrs: { T: 2, V: 3 },
    }),
    node(5, {
      name: 'rs_bucket',
      kind: 'reduce_scatter',
      op: 'reduce_scatter_tensor',
      inputs: ['a.grad', 'b.grad'],
      outputs: ['rs.a', 'rs.b'],
      collective: coll('reduce_scatter'),
    }),
    node(6, {
      name: 'rs_bucket.wait',
      kind: 'wait',
      op: 'wait_tensor',
      inputs: ['rs.a', 'rs.b'],
      outputs: [A.gradShard, B.gradShard],
      waitOf: 'rs_bucket',
    }),
    node(7, {
      name: 'a.adamw',
      kind: 'compute',
      op: 'adamw',
      inputs: [A.shard, A.gradShard, A.m, A.v],
      outputs: [A.shardNext, A.mNext, A.vNext],
      attrs: { n: 4, ...adam },
    }),
    node(8, {
      name: 'b.adamw',
      kind: 'compute',
      op: 'adamw',
      inputs: [B.shard, B.gradShard, B.m, B.v],
      outputs: [B.shardNext, B.mNext, B.vNext],
      attrs: { n: 3, ...adam },
    }),
  ];
  return {
    nodes,
    tensors,
    params: [
      { name: 'a', shape: [4, 2], numel: 8, shardRows: 2 },
      { name: 'b', shape: [2, 3], numel: 6, shardRows: 1 },
    ],
    meta: { model: 'test', worldSize: 2, paramDtype: 'fp32', reduceDtype: 'fp32', batch: 1, seqLen: 2 },
  };
}

describe('executeStep', () => {
  it('lays bucketed collectives out rank-major by member and splits them back (rank 0 of 2)', async () => {
    const graph = bucketGraph();
    const schedule: Schedule = { backend: 'aot_eager_autobucketing', graph, buckets: [], reasons: [], options: {} };
    const { k, live, runs } = spyKernels();
    const aShard = [1, 2, 3, 4];
    const bShard = [5, 6, 7];
    const seen: { ag?: Float32Array; rs?: Float32Array; tensors: string[][] } = { tensors: [] };
    // Rank 1 holds my shards + 100; the reduce-scatter hands rank 0 its own chunk 0.
    const comm: ExecComm = {
      worldSize: 2,
      allGather(req, input, output) {
        seen.ag = Float32Array.from(input);
        seen.tensors.push([...req.tensors]);
        output.set(input, 0);
        output.set(
          input.map((x) => x + 100),
          input.length,
        );
      },
      reduceScatter(req, input, output, op) {
        expect(op).toBe('avg');
        seen.rs = Float32Array.from(input);
        seen.tensors.push([...req.tensors]);
        output.set(input.subarray(0, output.length));
      },
      allReduce() {
        throw new Error('a 1-D graph has no all_reduce');
      },
      allToAll() {
        throw new Error('a dense graph has no all_to_all');
      },
    };
    const state = new Map<string, DeviceTensor>();
    const put = (id: string, data: number[], type: 'f32' | 'i32' = 'f32') => {
      const x = k.create(id, data.length, type);
      k.upload(x, type === 'f32' ? Float32Array.from(data) : Int32Array.from(data));
      state.set(id, x);
    };
    const A = paramTensorIds('a');
    const B = paramTensorIds('b');
    put(A.shard, aShard);
    put(A.m, [0, 0, 0, 0]);
    put(A.v, [0, 0, 0, 0]);
    put(B.shard, bShard);
    put(B.m, [0, 0, 0]);
    put(B.v, [0, 0, 0]);
    put(TARGETS, [0, 2], 'i32');
    const res = await executeStep(schedule, { kernels: k, comms: new Map([['dp', comm]]), state, step: 1 });

    expect([...(seen.ag as Float32Array)]).toEqual([...aShard, ...bShard]);
    expect(seen.tensors).toEqual([
      ['a.all_gather', 'b.all_gather'],
      ['a.reduce_scatter', 'b.reduce_scatter'],
    ]);
    const aFull = [...aShard, ...aShard.map((x) => x + 100)];
    const bFull = [...bShard, ...bShard.map((x) => x + 100)];
    const ga = aFull.map((x) => 2 * x);
    const gb = bFull.map((x) => 2 * x);
    // Chunk r = [a rows of rank r | b rows of rank r].
    expect([...(seen.rs as Float32Array)]).toEqual([
      ...ga.slice(0, 4),
      ...gb.slice(0, 3),
      ...ga.slice(4),
      ...gb.slice(3),
    ]);
    // AdamW got this rank's gradient shards.
    const adamws = runs.filter((r) => r.op === 'adamw');
    expect([...adamws[0].inputs[1]]).toEqual(ga.slice(0, 4));
    expect([...adamws[1].inputs[1]]).toEqual(gb.slice(0, 3));
    // Loss: cross-entropy of b.full rows against targets [0, 2].
    const ce = (row: number[], y: number) =>
      Math.log(row.reduce((s, x) => s + Math.exp(x - Math.max(...row)), 0)) + Math.max(...row) - row[y];
    expect(res.loss).toBeCloseTo((ce(bFull.slice(0, 3), 0) + ce(bFull.slice(3), 2)) / 2, 4);
    // The state now holds the optimizer outputs; nothing else is left allocated.
    expect(state.get(A.shard)?.id).toBe(A.shardNext);
    expect([...live].map((x) => x.id).sort()).toEqual(
      [A.shardNext, A.mNext, A.vNext, B.shardNext, B.mNext, B.vNext, TARGETS].sort(),
    );
  });

  it('trains the tiny model on one rank: loss starts near ln V and one step lowers it on the same batch', async () => {
    const graph = buildStepGraph({
      model: 'tiny',
      worldSize: 1,
      batch: 2,
      paramDtype: 'fp32',
      reduceDtype: 'fp32',
      lr: 3e-3,
    });
    const schedule: Schedule = { backend: 'aot_eager', graph, buckets: [], reasons: [], options: {} };
    const { k, live } = spyKernels();
    const comms = new Map([['dp', new RankComm(createCommInit(1, 1 << 15), 0)]]);
    const state = initRankState(
      schedule,
      {
        rank: 0,
        worldSize: 1,
        steps: 2,
        seed: 1,
        data: { vocab: 256, seqLen: 32, globalBatch: 2, seed: 1 },
        measure: false,
      },
      k,
    );
    const batch = batchRows({ vocab: 256, seqLen: 32, globalBatch: 2, seed: 9 }, 1, 0, 2);
    for (const [id, data] of [
      [TOKENS, batch.tokens],
      [TARGETS, batch.targets],
    ] as const) {
      const x = k.create(id, data.length, 'i32');
      k.upload(x, data);
      state.set(id, x);
    }
    const first = await executeStep(schedule, { kernels: k, comms, state, step: 1 });
    expect(Math.abs(first.loss - Math.log(256))).toBeLessThan(0.05);
    const second = await executeStep(schedule, { kernels: k, comms, state, step: 2 });
    expect(second.loss).toBeLessThan(first.loss - 0.01);
    // Only persistent state survives a step.
    expect(live.size).toBe(state.size);
  });

  it('rejects a dtype-changing cast with a message naming the node', async () => {
    const graph = buildStepGraph({ model: 'tiny', worldSize: 1, paramDtype: 'bf16', reduceDtype: 'fp32' });
    const schedule: Schedule = { backend: 'aot_eager', graph, buckets: [], reasons: [], options: {} };
    await expect(
      executeStep(schedule, {
        kernels: createCpuKernels(),
        comms: new Map([['dp', new RankComm(createCommInit(1, 1), 0)]]),
        state: new Map(),
        step: 1,
      }),
    ).rejects.toThrow(/cast fp32 → bf16 is not supported/);
  });
});
