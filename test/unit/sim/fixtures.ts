// Hand-built step graphs for simulator and memory tests: small enough to check by hand.

import type { Bucket, Schedule } from '../../../src/backends/schedule_types';
import type { CollectiveKind, GraphNode, StepGraph, TensorInfo } from '../../../src/graph/types';
import { graphNode } from '../../helpers/graph_node';

type NodeSpec = Partial<GraphNode> & Pick<GraphNode, 'name' | 'kind'>;

export function tensor(id: string, bytes: number, extra: Partial<TensorInfo> = {}): TensorInfo {
  return { id, shape: [bytes / 4], dtype: 'fp32', bytes, ...extra };
}

export function makeGraph(specs: readonly NodeSpec[], tensors: readonly TensorInfo[], worldSize = 2): StepGraph {
  const nodes: GraphNode[] = specs.map((s, i) => graphNode({ op: s.kind, ...s, id: i }));
  return {
    nodes,
    tensors: Object.fromEntries(tensors.map((t) => [t.id, t])),
    params: [],
    meta: { model: 'test', worldSize, paramDtype: 'fp32', reduceDtype: 'fp32', batch: 1, seqLen: 1 },
  };
}

export function collective(
  kind: CollectiveKind,
  bytes: { inputBytes: number; outputBytes: number },
  groupSize: number,
  group = 'dp',
) {
  return { kind, group, groupSize, dtype: 'fp32' as const, ...bytes };
}

export function schedule(graph: StepGraph, buckets: readonly Bucket[] = []): Schedule {
  return { backend: 'aot_eager', graph, buckets, reasons: [], options: {} };
}

/**
 * compute `mm0` (reads x) → all_gather `w.ag` (shard 100 B → full 200 B) → wait → compute `mm1`
 * (reads full weight and mm0's output) → reduce_scatter of mm1's grad (400 B → 200 B) → wait.
 */
export function tinyGraph(worldSize = 2): StepGraph {
  const ts = [
    tensor('x', 40, { persistent: true }),
    tensor('w.shard', 100, { persistent: true }),
    tensor('h0', 1000),
    tensor('w.full', 200),
    tensor('w.full.w', 200, { aliasOf: 'w.full' }),
    tensor('g', 400),
    tensor('g.shard', 200),
    tensor('g.shard.w', 200, { aliasOf: 'g.shard' }),
  ];
  return makeGraph(
    [
      { name: 'mm0', kind: 'compute', op: 'matmul', inputs: ['x'], outputs: ['h0'] },
      {
        name: 'w.ag',
        kind: 'all_gather',
        op: 'all_gather_into_tensor',
        inputs: ['w.shard'],
        outputs: ['w.full'],
        collective: collective('all_gather', { inputBytes: 100, outputBytes: 200 }, worldSize),
        params: ['w'],
      },
      { name: 'w.ag.wait', kind: 'wait', op: 'wait_tensor', inputs: ['w.full'], outputs: ['w.full.w'], waitOf: 'w.ag' },
      { name: 'mm1', kind: 'compute', op: 'matmul', inputs: ['h0', 'w.full.w'], outputs: ['g'] },
      {
        name: 'g.rs',
        kind: 'reduce_scatter',
        op: 'reduce_scatter_tensor',
        inputs: ['g'],
        outputs: ['g.shard'],
        collective: collective('reduce_scatter', { inputBytes: 400, outputBytes: 200 }, worldSize),
      },
      {
        name: 'g.rs.wait',
        kind: 'wait',
        op: 'wait_tensor',
        inputs: ['g.shard'],
        outputs: ['g.shard.w'],
        waitOf: 'g.rs',
      },
    ],
    ts,
    worldSize,
  );
}
