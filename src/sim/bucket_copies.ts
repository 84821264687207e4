// The copy kernels a bucketed collective runs on the compute stream, which the merged collective
// node itself does not carry (docs/ARCHITECTURE.md §5). As torch 2.13 merges a bucket
// (torch/_inductor/fx_passes/bucketing.py; FSDP2's _fsdp_collectives.py does the same copies):
//  - all-gather: the members' shards are copied into the flat input (_pre_bucket_all_gather's
//    _foreach_copy_), which folds each member's dtype cast (has_mergeable_all_gather_convert_dtype):
//    a member whose shard a cast node wrote costs nothing more, the cast already moves its bytes;
//    any other member is one more read and write. After the wait the flat output [world, N] is split
//    on dim 1 (split_with_sizes) and each member reshaped to its parameter: a non-contiguous view,
//    so one copy kernel per member of its gathered bytes (FSDP2: split_with_sizes_copy);
//  - reduce-scatter and all-reduce: the inputs are concatenated into the flat input (torch.cat; FSDP2:
//    chunk_cat), one kernel reading and writing every input byte; the outputs are contiguous
//    slices of the flat output (views, free). bucket_mode 'coalesced' reduce-scatters copy nothing.
// A bucket of one member is the plain collective: no copies. Each copy is a memory-bound 'copy'
// node, timed by the cost model like any other (the preset's achieved HBM bandwidth + a launch).

import type { Schedule } from '../backends';
import type { GraphNode } from '../graph';
import { weakMemo } from '../util';

export interface BucketCopies {
  /** Copy-in before the collective starts, by merged collective name. */
  readonly copyIn: ReadonlyMap<string, GraphNode>;
  /** Copy-outs after the wait, by merged wait name. */
  readonly copyOut: ReadonlyMap<string, readonly GraphNode[]>;
}

const NONE: BucketCopies = { copyIn: new Map(), copyOut: new Map() };
const cache = weakMemo(
  (schedule: Schedule) => schedule,
  (schedule: Schedule) => (schedule.buckets.length === 0 ? NONE : collect(schedule)),
);

/** A copy kernel reading and writing `bytes`, on behalf of the bucket node `of`. */
function copyNode(of: GraphNode, name: string, bytes: number, inputs: readonly string[]): GraphNode {
  return {
    id: -1,
    name,
    kind: 'compute',
    op: 'copy',
    inputs,
    outputs: [],
    flops: 0,
    bytesMoved: 2 * bytes,
    matmulLike: false,
    phase: of.phase,
    ...(of.layer !== undefined ? { layer: of.layer } : {}),
    ...(of.params !== undefined ? { params: of.params } : {}),
  };
}

/** The copy kernels of every merged collective (two or more members) of `schedule`; cached per schedule. */
export function bucketCopies(schedule: Schedule): BucketCopies {
  return cache(schedule);
}

function collect(schedule: Schedule): BucketCopies {
  const { nodes, tensors } = schedule.graph;
  const castOutputs = new Set(nodes.filter((n) => n.kind === 'cast').flatMap((n) => n.outputs));
  const coalesced = schedule.options.bucket_mode === 'coalesced';
  const copyIn = new Map<string, GraphNode>();
  const copyOut = new Map<string, GraphNode[]>();
  const merged = new Map<string, GraphNode>();
  for (const n of nodes) if ((n.collective?.members?.length ?? 0) > 1) merged.set(n.name, n);
  for (const n of nodes) {
    const c = n.collective;
    if (merged.has(n.name) && c !== undefined) {
      const uncast = c.kind === 'all_gather' ? n.inputs.filter((t) => !castOutputs.has(t)) : n.inputs;
      const bytes = uncast.reduce((s, t) => s + (tensors[t]?.bytes ?? 0), 0);
      const copies = !(coalesced && c.kind === 'reduce_scatter') && bytes > 0;
      if (copies) copyIn.set(n.name, copyNode(n, `${n.name}.copy_in`, bytes, uncast));
    }
    const of = n.waitOf !== undefined ? merged.get(n.waitOf) : undefined;
    if (of?.collective?.kind === 'all_gather') {
      const out = (t: string, i: number) => copyNode(n, `${n.name}.copy_out.${i}`, tensors[t]?.bytes ?? 0, [t]);
      copyOut.set(n.name, of.outputs.map(out));
    }
  }
  return { copyIn, copyOut };
}
