// fsdp2_eager: the reference the SimpleFSDP backends are compared with — torchtitan's FSDP2
// (`fully_shard` per transformer block, torch/distributed/fsdp/_fully_shard) running in eager
// mode, as PR #1881's "FSDP2-eager" rows do. What FSDP2 does, per module (a transformer block,
// tok_embeddings, and the root's norm + output):
//  - forward: one all-gather of the module's parameters (a flat buffer), implicitly prefetched one
//    module ahead — the CPU issues module i+1's all-gather on the all-gather stream while module
//    i's kernels run; backward: the same one-module-ahead re-gather (explicit backward prefetch);
//  - backward: one reduce-scatter of the module's gradients after its last gradient, waited in the
//    next module's post-backward (one module later), the last before the optimizer;
//  - copy-in (the flat all-gather input, cast to param_dtype) runs on the all-gather copy-in
//    stream, the all-gather output and the reduce-scatter input are allocated on their own
//    streams: the caching allocator keeps a pool per stream (FSDP2_STREAMS, used by
//    src/sim/allocator.ts), which is why FSDP2 reserves more memory than SimpleFSDP.
// The order is transformer_block's (the same buckets and the same one-block-ahead overlap, built
// by runTransformerBlock); the reasons say what FSDP2 does instead.
// Departures: the copy-in casts stay on the compute stream (the simulator runs compute kernels on
// one stream; on llama3-8b they are ~3 % of the step); torchtitan's reshard_after_forward=False
// for the last block (it skips one re-gather) is not modelled.

import type { CostModel } from '../estimate/types';
import type { GraphNode, StepGraph } from '../graph/types';
import { resolveOptions } from './options';
import { runTransformerBlock } from './transformer_block';
import type { Backend, Reason, Schedule } from './types';

export type Fsdp2EagerOptions = Record<string, never>;

/** The stream whose caching-allocator pool serves a collective's buffers under FSDP2. */
export function fsdp2StreamOf(node: GraphNode, role: 'input' | 'output'): string {
  const kind = node.collective?.kind;
  if (kind === 'all_gather') return role === 'output' ? 'all_gather' : 'all_gather_copy_in';
  if (kind === 'reduce_scatter') return 'reduce_scatter'; // input buffer and the sharded output (.grad views it)
  return 'compute';
}

function fsdp2Reason(r: Reason): Reason {
  if (r.code === 'block_bucket') {
    return { ...r, text: r.text.replace("torchtitan's one bucket per transformer block", 'FSDP2 gathers and reduces one fully_shard module (here a transformer block) as one flat buffer') };
  }
  if (r.code === 'block_prefetch') {
    const text = r.text.startsWith('issued one block ahead')
      ? r.text.replace('issued one block ahead', "FSDP2's implicit prefetch: issued on the all-gather stream one module ahead")
      : r.text.replace('waited one block later', "waited one module later (FSDP2's post-backward of the next module)");
    return { ...r, text };
  }
  return r;
}

export function runFsdp2Eager(graph: StepGraph, cost: CostModel, options?: Partial<Fsdp2EagerOptions>): Schedule {
  const opts = resolveOptions('fsdp2_eager', {}, {}, options as Record<string, unknown> | undefined);
  const tb = runTransformerBlock(graph, cost);
  return { ...tb, backend: 'fsdp2_eager', reasons: tb.reasons.map(fsdp2Reason), options: opts };
}

export const fsdp2Eager: Backend<Fsdp2EagerOptions> = { name: 'fsdp2_eager', run: runFsdp2Eager };
