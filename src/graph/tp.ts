// Sequence-parallel activation collectives of torchtitan's Llama TP plan (parallelize_llama /
// apply_tp, DESIGN.md "Meshes"): outside attention and the feed-forward activations are sharded on
// the sequence (rows of [T, D]); before wq/wk/wv and w1/w3 the shard is all-gathered on 'tp'
// (Shard(1) → Replicate); the partial sums out of wo, w2 and the row-wise embedding are
// reduce-scattered back to sequence shards. The backward mirrors each (all-gather ↔ reduce-scatter),
// and a replicated (norm) weight's gradient, partial across tp, is all-reduced on 'tp'.
// On tp = 1 every helper is the identity, so a 1-D graph is unchanged.

import { emitCollective, type FsdpCtx } from './fsdp';

export const tpDegree = (c: FsdpCtx): number => c.mesh?.tp ?? 1;

/** [T/tp, D] sequence shard → [T, D] (all_gather on tp + wait); `x` itself when tp = 1. */
export function emitSeqGather(c: FsdpCtx, name: string, x: string): string {
  const tp = tpDegree(c);
  if (tp === 1) return x;
  const t = c.e.tensors[x];
  return emitCollective(c, {
    name: `${name}.tp_all_gather`,
    kind: 'all_gather',
    dim: 'tp',
    input: x,
    outShape: [t.shape[0] * tp, ...t.shape.slice(1)],
    dtype: t.dtype,
    out: `${name}.tp_full`,
  });
}

/** [T, D] partial sum → [T/tp, D] sequence shard of the sum (reduce_scatter on tp + wait); `x` when tp = 1. */
export function emitSeqReduceScatter(c: FsdpCtx, name: string, x: string): string {
  const tp = tpDegree(c);
  if (tp === 1) return x;
  const t = c.e.tensors[x];
  return emitCollective(c, {
    name: `${name}.tp_reduce_scatter`,
    kind: 'reduce_scatter',
    dim: 'tp',
    input: x,
    outShape: [t.shape[0] / tp, ...t.shape.slice(1)],
    dtype: t.dtype,
    out: `${name}.tp_shard`,
    reduceOp: 'sum',
  });
}

/** The id a replicated weight's gradient op writes: a partial sum on TP graphs, reduced by emitGradAllReduce. */
export const partialGradId = (c: FsdpCtx, grad: string): string => (tpDegree(c) === 1 ? grad : `${grad}.tp_partial`);

/** partial gradient → all_reduce(sum) on tp → `grad`; nothing when tp = 1. */
export function emitGradAllReduce(c: FsdpCtx, fqn: string, grad: string): void {
  if (tpDegree(c) === 1) return;
  const partial = partialGradId(c, grad);
  const t = c.e.tensors[partial];
  emitCollective(c, {
    name: `${fqn}.tp_all_reduce`,
    kind: 'all_reduce',
    dim: 'tp',
    input: partial,
    outShape: t.shape,
    dtype: t.dtype,
    out: grad,
    reduceOp: 'sum',
    params: [fqn],
  });
}
