// torch 2.13's bucket_mode "coalesced" (bucketing.py reduce_scatter_merge_fn_coalesced): a
// reduce-scatter bucket goes out as one reduce_scatter_tensor_coalesced (one NCCL group call)
// over flat views of the members' inputs, with a getitem and a wait per member and a view back to
// each member's shape. No copy-in (cat) and no copy-out: nothing of the merge costs compute time,
// and each member's output stays its own storage. All-gathers merge as in "default" (torch logs
// "coalesced bucket_mode not supported for all_gather, using default").
// The merged collective has no bucket key (torch get_collective_type knows only
// reduce_scatter_tensor): the overlap bucketer never re-buckets it, a same-kind collective in
// flight does not count as bucketed with it, and it is no reduce-scatter for the scheduler's
// reduce-scatter domination.

import type { DType, GraphNode, TensorInfo } from '../../graph';

/** The op torch traces for a coalesced reduce-scatter bucket. */
const COALESCED_REDUCE_SCATTER = '_c10d_functional.reduce_scatter_tensor_coalesced.default';

/** A collective that torch issues as one coalesced group call (several waits, no bucket key). */
export const isCoalesced = (node: GraphNode): boolean => node.attrs?.target === COALESCED_REDUCE_SCATTER;

/** How a merge names and makes nodes and tensors (pre_bucket.ts's Builder). */
export interface TraceBuilder {
  tensor(id: string, shape: readonly number[], dtype: DType, aliasOf?: string): string;
  node(fnName: string, target: string, spec: TraceNodeSpec): GraphNode;
}

interface TraceNodeSpec {
  readonly kind: GraphNode['kind'];
  readonly inputs: readonly string[];
  readonly outputs: (name: string) => string[];
  readonly ioBytes?: number;
  readonly extra?: Partial<GraphNode>;
}

export interface CoalescedTrace {
  readonly start: GraphNode;
  /** One per member, in member order. */
  readonly waits: readonly GraphNode[];
}

/**
 * The nodes of reduce_scatter_merge_fn_coalesced in trace order: a flat view per input, the
 * coalesced reduce-scatter (one output per member), a getitem and a wait per output, a view per
 * output back to the member's shape, writing the tensor the member's wait wrote (`memberOut`).
 * `fields`: the merged collective's collective, size and estimate fields.
 */
export function traceCoalescedReduceScatter(
  b: TraceBuilder,
  tensors: Readonly<Record<string, TensorInfo>>,
  ins: readonly string[],
  memberOut: readonly string[],
  groupSize: number,
  fields: Partial<GraphNode>,
): CoalescedTrace {
  const N = ins.length;
  const numels = ins.map((t) => tensors[t].shape.reduce((a, c) => a * c, 1));
  const flats = ins.map((t, k) =>
    b.node(k === 0 ? 'view' : `view_${k}`, 'aten.view.default', {
      kind: 'view',
      inputs: [t],
      outputs: (n) => [b.tensor(n, [numels[k]], tensors[t].dtype, t)],
    }),
  );
  // the collective's outputs are fresh: each member's shard is its own storage
  const start = b.node('reduce_scatter_tensor_coalesced', COALESCED_REDUCE_SCATTER, {
    kind: 'reduce_scatter',
    inputs: flats.map((f) => f.outputs[0]),
    outputs: (n) => ins.map((t, k) => b.tensor(`${n}.${k}`, [numels[k] / groupSize], tensors[t].dtype)),
    extra: fields,
  });
  const items = start.outputs.map((o, k) =>
    b.node(k === 0 ? 'getitem' : `getitem_${k}`, 'getitem', {
      kind: 'view',
      inputs: [o],
      outputs: (n) => [b.tensor(n, tensors[o].shape, tensors[o].dtype, o)],
    }),
  );
  const waits = items.map((g, k) =>
    b.node(k === 0 ? 'wait_tensor' : `wait_tensor_${k}`, '_c10d_functional.wait_tensor.default', {
      kind: 'wait',
      inputs: g.outputs,
      outputs: (n) => [b.tensor(n, tensors[g.outputs[0]].shape, tensors[g.outputs[0]].dtype, g.outputs[0])],
      extra: { waitOf: start.name },
    }),
  );
  waits.forEach((w, k) => {
    const o = tensors[memberOut[k]];
    b.node(`view_${N + k}`, 'aten.view.default', {
      kind: 'view',
      inputs: w.outputs,
      outputs: () => [b.tensor(memberOut[k], o.shape, o.dtype, w.outputs[0])],
    });
  });
  return { start, waits };
}
