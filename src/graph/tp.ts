// Sequence-parallel activation collectives of torchtitan's Llama TP plan (parallelize_llama /
// apply_tp, docs/ARCHITECTURE.md §7): outside attention and the feed-forward activations are sharded on
// the sequence (rows of [T, D]); before wq/wk/wv and w1/w3 the shard is all-gathered on 'tp'
// (Shard(1) → Replicate); the partial sums out of wo, w2 and the row-wise embedding are
// reduce-scattered back to sequence shards. The backward mirrors each (all-gather ↔ reduce-scatter),
// and a replicated (norm) weight's gradient, partial across tp, is all-reduced on 'tp'.
// On tp = 1 every helper is the identity, so a 1-D graph is unchanged. The tape* helpers are the
// same collectives in a block built on a BlockTape (moe_block.ts), their mirrors recorded.
//
// Layout copies. torchtitan's activations are [B, S, D] and these collectives work on dim 1 (S);
// NCCL only gathers and scatters dim 0, so torch's functional collectives reshape around them
// (torch/distributed/_functional_collectives.py): reduce_scatter_single with scatter_dim ≠ 0 first
// runs torch.cat(torch.chunk(x, tp, dim=1)) (_chunk_or_narrow_cat, still in torch 2.13), a real
// copy of the whole input, which the step graph holds as a `copy` node; all_gather_single with
// gather_dim ≠ 0 ran the same cat on its output until pytorch PR #169404 (Dec 2025) made it a view
// when the batch is 1 — StepConfig.seqParallelGatherCopy models the older torch.

import { emitCopy } from './emit_ops';
import { emitCollective, emitReduceScatter, gradId, type FsdpCtx, type ShardedParam } from './fsdp';
import type { BlockTape } from './tape';

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

/**
 * Whether a parameter's weight gradient is a partial sum across tp: a weight TP leaves Replicate
 * (a norm, MLA's low-rank projections, the router gate) reads a sequence shard or a partial
 * gradient on each tp rank; a routed expert is never one (split on F by tp, or on E by ep).
 */
const hasPartialGrad = (c: FsdpCtx, p: ShardedParam): boolean =>
  tpDegree(c) > 1 && !p.spec.expert && p.info.tp === undefined;

/** The id a weight-gradient op writes for `p`: the gradient itself, or its tp-partial sum. */
export const weightGradOut = (c: FsdpCtx, p: ShardedParam): string =>
  hasPartialGrad(c, p) ? partialGradId(c, gradId(p.spec.name)) : gradId(p.spec.name);

/** A weight gradient's sync: the tp all-reduce of a partial one, then FSDP's reduce-scatter. */
export function emitWeightGradSync(c: FsdpCtx, p: ShardedParam): void {
  if (hasPartialGrad(c, p)) emitGradAllReduce(c, p.spec.name, gradId(p.spec.name));
  emitReduceScatter(c, p);
}

/** emitSeqGather on a tape: the gradient of the gathered tensor is reduce-scattered back. */
export function tapeSeqGather(t: BlockTape, base: string, x: string): string {
  const name = t.name(base);
  const full = emitSeqGather(t.c, name, x);
  if (full !== x) t.record(() => t.accumulate(x, emitSeqReduceScatter(t.c, `${name}.bwd`, t.grad(full)), name));
  return full;
}

/** emitSeqReduceScatter on a tape: the shard's gradient is all-gathered back (the partial's, replicated). */
export function tapeSeqReduceScatter(t: BlockTape, base: string, x: string): string {
  const name = t.name(base);
  const shard = emitSeqReduceScatter(t.c, name, x);
  if (shard !== x) t.record(() => t.accumulate(x, emitSeqGather(t.c, `${name}.bwd`, t.grad(shard)), name));
  return shard;
}
