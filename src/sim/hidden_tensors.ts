// Tensors our coarse graph ops hide: one `cross_entropy` node stands for torchtitan's loss,
// `F.cross_entropy(pred.flatten(0, 1).float(), labels)` (torchtitan components/loss.py), which in
// aten is an fp32 upcast, log_softmax (its fp32 output saved for the backward) and nll_loss; its
// backward is nll_loss_backward (an fp32 gradient of the log-probabilities), log_softmax_backward
// (the fp32 gradient of the logits) and the cast back to the logits' dtype. For the caching
// allocator (allocator.ts) these are real allocations; at seq 8192 × vocab 128256 each fp32
// tensor is 3.9 GiB. Positions are fractional so that the aten ops inside one node keep their
// order: allocations at p − 0.3, p − 0.2, frees at p − 0.15, before the node's own outputs at p.
//
// A compiled loss (attrs.compiled: torchtitan `compile.components` with "loss", inductor) runs
// inductor's decomposition of cross_entropy: log_softmax becomes amax, exp, sum and log in one fused
// reduction over the bf16 logits, nll_loss a gather, and the min-cut partitioner saves for the
// backward only the [T] fp32 row max and log-sum-exp besides the logits it already holds; the
// backward recomputes exp(x − max − lse) − onehot in one pointwise kernel that writes the gradient
// in the logits' dtype (the node's own output). No fp32 [T, V] tensor is allocated.
// torchtitan's ChunkedLossWrapper (b5bcd76 components/loss.py) would instead run lm_head + loss per
// sequence chunk (8 by default), materializing [T/8, V] logits at a time; the step graph does not
// model chunking: its loss follows deepseek_v3_16b.toml (8a2686c4a), one loss over all T tokens.

import type { GraphNode } from '../graph';
import type { Allocation } from './allocator';

const FP32 = 4; // bytes
/** [T] fp32 tensors a compiled loss saves for its backward: the row max and the log-sum-exp. */
const COMPILED_SAVED_ROWS = 2;

const logitsOf = (n: GraphNode): number => Number(n.attrs?.T ?? 0) * Number(n.attrs?.V ?? 0);

/** Bytes the loss forward saves for its backward: fp32 log-probabilities, or a compiled loss's [T] rows. */
function savedBytes(n: GraphNode): number {
  if (n.attrs?.compiled === true) return COMPILED_SAVED_ROWS * Number(n.attrs?.T ?? 0) * FP32;
  return logitsOf(n) * FP32;
}

/** The forward loss's allocations besides the saved one: the eager fp32 upcast (none compiled). */
function forwardTemps(n: GraphNode, p: number): Allocation[] {
  if (n.attrs?.compiled === true) return [];
  return [{ alloc: p - 0.3, free: p - 0.15, bytes: logitsOf(n) * FP32, stream: 'compute' }]; // pred.float()
}

/** The backward loss's allocations: eager's two fp32 gradients (none compiled: it writes its output). */
function backwardTemps(n: GraphNode, p: number): Allocation[] {
  if (n.attrs?.compiled === true) return [];
  const bytes = logitsOf(n) * FP32;
  return [
    { alloc: p - 0.3, free: p - 0.15, bytes, stream: 'compute' }, // nll_loss_backward
    { alloc: p - 0.2, free: p, bytes, stream: 'compute' }, // log_softmax_backward, cast at p
  ];
}

/** The hidden allocations of the loss ops in `nodes` (execution order). */
export function hiddenTensors(nodes: readonly GraphNode[]): Allocation[] {
  const out: Allocation[] = [];
  let fwd = -1;
  let saved = 0;
  nodes.forEach((n, p) => {
    if (n.op === 'cross_entropy') {
      out.push(...forwardTemps(n, p));
      fwd = p;
      saved = savedBytes(n);
    } else if (n.op === 'cross_entropy_bwd') {
      // what the forward saved (log_softmax's output, or the compiled loss's rows), freed here
      if (fwd >= 0) out.push({ alloc: fwd - 0.2, free: p - 0.15, bytes: saved, stream: 'compute' });
      out.push(...backwardTemps(n, p));
    }
  });
  // a forward loss with no backward in the schedule keeps what it saved to the end
  if (fwd >= 0 && !nodes.some((n) => n.op === 'cross_entropy_bwd'))
    out.push({ alloc: fwd - 0.2, free: nodes.length, bytes: saved, stream: 'compute' });
  return out;
}
