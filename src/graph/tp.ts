// Sequence-parallel activation collectives of torchtitan's Llama TP plan (parallelize_llama /
// apply_tp, docs/ARCHITECTURE.md §7): outside attention and the feed-forward activations are sharded on
// the sequence (rows of [T, D]); before wq/wk/wv and w1/w3 the shard is all-gathered on 'tp'
// (Shard(1) → Replicate); the partial sums out of wo, w2 and the row-wise embedding are
// reduce-scattered back to sequence shards. The backward mirrors each (all-gather ↔ reduce-scatter),
// and a replicated (norm) weight's gradient, partial across tp, is all-reduced on 'tp'.
// On tp = 1 every helper is the identity, so a 1-D graph is unchanged.
//
// Layout copies. torchtitan's activations are [B, S, D] and these collectives work on dim 1 (S);
// NCCL only gathers and scatters dim 0, so torch's functional collectives reshape around them
// (torch/distributed/_functional_collectives.py): reduce_scatter_single with scatter_dim ≠ 0 first
// runs torch.cat(torch.chunk(x, tp, dim=1)) (_chunk_or_narrow_cat, still in torch 2.13), a real
// copy of the whole input, which the step graph holds as a `copy` node; all_gather_single with
// gather_dim ≠ 0 ran the same cat on its output until pytorch PR #169404 (Dec 2025) made it a view
// when the batch is 1 — StepConfig.seqParallelGatherCopy models the older torch.

import { emitCopy } from './emit_ops';
import { emitCollective, type FsdpCtx } from './fsdp';

export const tpDegree = (c: FsdpCtx): number => c.mesh?.tp ?? 1;

/** [T/tp, D] sequence shard → [T, D] (all_gather on tp + wait); `x` itself when tp = 1. */
export function emitSeqGather(c: FsdpCtx, name: string, x: string): string {
  const tp = tpDegree(c);
  if (tp === 1) return x;
  const t = c.e.tensors[x];
  const full = emitCollective(c, {
    name: `${name}.tp_all_gather`,
    kind: 'all_gather',
    dim: 'tp',
    input: x,
    outShape: [t.shape[0] * tp, ...t.shape.slice(1)],
    dtype: t.dtype,
    out: `${name}.tp_full`,
  });
  return c.seqParallelGatherCopy ? emitCopy(c.e, { name: `${name}.tp_all_gather.cat`, x: full }) : full;
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
    input: emitCopy(c.e, { name: `${name}.tp_reduce_scatter.cat`, x }),
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
