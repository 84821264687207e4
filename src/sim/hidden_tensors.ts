// Tensors our coarse graph ops hide: one `cross_entropy` node stands for torchtitan's loss,
// `F.cross_entropy(pred.flatten(0, 1).float(), labels)` (torchtitan components/loss.py), which in
// aten is an fp32 upcast, log_softmax (its fp32 output saved for the backward) and nll_loss; its
// backward is nll_loss_backward (an fp32 gradient of the log-probabilities), log_softmax_backward
// (the fp32 gradient of the logits) and the cast back to the logits' dtype. For the caching
// allocator (allocator.ts) these are real allocations; at seq 8192 × vocab 128256 each fp32
// tensor is 3.9 GiB. Positions are fractional so that the aten ops inside one node keep their
// order: allocations at p − 0.3, p − 0.2, frees at p − 0.15, before the node's own outputs at p.

import type { GraphNode } from '../graph';
import type { Allocation } from './allocator';

const FP32 = 4; // bytes

/** The hidden allocations of the loss ops in `nodes` (execution order). */
export function hiddenTensors(nodes: readonly GraphNode[]): Allocation[] {
  const out: Allocation[] = [];
  let fwd = -1;
  let logProbBytes = 0;
  nodes.forEach((n, p) => {
    if (n.op === 'cross_entropy') {
      const bytes = Number(n.attrs?.T ?? 0) * Number(n.attrs?.V ?? 0) * FP32;
      out.push({ alloc: p - 0.3, free: p - 0.15, bytes, stream: 'compute' }); // pred.float()
      fwd = p;
      logProbBytes = bytes;
    } else if (n.op === 'cross_entropy_bwd') {
      const bytes = Number(n.attrs?.T ?? 0) * Number(n.attrs?.V ?? 0) * FP32;
      // log_softmax, saved
      if (fwd >= 0) out.push({ alloc: fwd - 0.2, free: p - 0.15, bytes: logProbBytes, stream: 'compute' });
      out.push({ alloc: p - 0.3, free: p - 0.15, bytes, stream: 'compute' }); // nll_loss_backward
      out.push({ alloc: p - 0.2, free: p, bytes, stream: 'compute' }); // log_softmax_backward, cast at p
    }
  });
  // a forward loss with no backward in the schedule keeps its log-probabilities to the end
  if (fwd >= 0 && !nodes.some((n) => n.op === 'cross_entropy_bwd'))
    out.push({ alloc: fwd - 0.2, free: nodes.length, bytes: logProbBytes, stream: 'compute' });
  return out;
}
