// fsdp2_eager: the reference the SimpleFSDP backends are compared with — torchtitan's FSDP2
// (`fully_shard` per transformer block, torch/distributed/fsdp/_fully_shard) running in eager
// mode, as PR #1881's "FSDP2-eager" rows do. What FSDP2 does, per module (a transformer block,
// tok_embeddings, and the root's norm + output):
//  - forward: one all-gather of the module's parameters (a flat buffer), implicitly prefetched one
//    module ahead — the CPU issues module i+1's all-gather on the all-gather stream while module
//    i's kernels run; backward: the same one-module-ahead re-gather (explicit backward prefetch);
//  - backward: one reduce-scatter of the module's gradients after its last gradient, waited in the
//    next module's post-backward (one module later), the last before the optimizer;
//  - streams, as torch 2.13's _fully_shard does them (_fsdp_param_group.py, _fsdp_collectives.py):
//    all-gather copy-in (all_gather_copy_in: the shards cast to param_dtype into the flat input)
//    runs on the all-gather copy-in stream, in forward and pre-backward alike
//    (get_all_gather_streams); the all-gather on the all-gather stream, which waits for it; the
//    copy-out (split_with_sizes_copy) on the compute stream in wait_for_unshard; the reduce-scatter
//    copy-in (chunk_cat) on the compute stream, the reduce-scatter and its post-reduce on the
//    reduce-scatter stream. Here the copy-in casts run on 'side:all_gather_copy_in'
//    (schedule.sideStreams), so they leave the compute stream: the gap PR #1881 names ("FSDP2
//    handles copy-in/out in two different streams, whereas SimpleFSDP handles copy-in/out in the
//    same stream"). The copy-out and the reduce-scatter's copy-in are a bucket's copy kernels,
//    which the simulator runs on the compute stream (src/sim/bucket_copies.ts); the
//    reduce-scatter's copy-out is a view.
//  - the all-gather output and the reduce-scatter input are allocated on their own streams: the
//    caching allocator keeps a pool per stream (fsdp2StreamOf, used by src/sim/allocator.ts), which
//    is why FSDP2 reserves more memory than SimpleFSDP.
// The order is transformer_block's (the same buckets and the same one-block-ahead overlap, built
// by runTransformerBlock); the reasons say what FSDP2 does instead.
// Departure: torchtitan's reshard_after_forward=False for the last block (it skips one re-gather)
// is not modelled.

import type { CostModel } from '../estimate';
import type { GraphNode, StepGraph } from '../graph';
import { resolveOptions } from './knob_specs';
import { moduleOf, runTransformerBlock } from './transformer_block';
import type { Backend, Reason, ReasonDetail, Schedule } from './schedule_types';

export type Fsdp2EagerOptions = Record<string, never>;

/** The stream whose caching-allocator pool serves a collective's buffers under FSDP2. */
export function fsdp2StreamOf(node: GraphNode, role: 'input' | 'output'): string {
  const kind = node.collective?.kind;
  if (kind === 'all_gather') return role === 'output' ? 'all_gather' : 'all_gather_copy_in';
  if (kind === 'reduce_scatter') return 'reduce_scatter'; // input buffer and the sharded output (.grad views it)
  return 'compute';
}

/** The reason FSDP2 gives for a collective transformer_block placed the same way. */
function fsdp2Reason(r: Reason, node: GraphNode | undefined): Reason {
  if (node?.collective === undefined || (r.code !== 'block_bucket' && r.code !== 'block_prefetch')) return r;
  const module = moduleOf(node);
  const { kind: coll, group } = node.collective;
  const phase = node.phase;
  if (r.code === 'block_bucket') return { ...r, detail: { kind: 'fsdp2_bucket', coll, phase, group, module } };
  const detail: ReasonDetail =
    coll === 'all_gather'
      ? { kind: 'fsdp2_prefetch_all_gather', phase, module }
      : { kind: 'fsdp2_reduce_scatter', module };
  return { ...r, detail };
}

/** FSDP2's all-gather copy-in stream (torch: comm_ctx.all_gather_copy_in_stream). */
export const FSDP2_COPY_IN_STREAM = 'all_gather_copy_in';

/** The casts whose output an all-gather reads (FSDP2's copy-in), each on the copy-in stream. */
export function copyInStreams(g: StepGraph): Record<string, string> {
  const gathered = new Set(g.nodes.filter((n) => n.kind === 'all_gather').flatMap((n) => n.inputs));
  const copyIns = g.nodes.filter((n) => n.kind === 'cast' && n.outputs.some((t) => gathered.has(t)));
  return Object.fromEntries(copyIns.map((n) => [n.name, FSDP2_COPY_IN_STREAM]));
}

export function runFsdp2Eager(graph: StepGraph, cost: CostModel, options?: Partial<Fsdp2EagerOptions>): Schedule {
  const opts = resolveOptions('fsdp2_eager', {}, {}, options as Record<string, unknown> | undefined);
  const tb = runTransformerBlock(graph, cost);
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const reasons = tb.reasons.map((r) => fsdp2Reason(r, byName.get(r.node)));
  return { ...tb, backend: 'fsdp2_eager', reasons, options: opts, sideStreams: copyInStreams(tb.graph) };
}

export const fsdp2Eager: Backend<Fsdp2EagerOptions> = { name: 'fsdp2_eager', run: runFsdp2Eager };
