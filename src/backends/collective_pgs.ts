// graph_trainer's reassign_collective_pgs_pass (`--compile.enable_fsdp_ag_rs_overlap`, aot_fx_trace;
// torchtitan experiments/graph_trainer/fsdp_passes.py): every FSDP all-gather moves to a second
// process group of the same ranks, which NCCL runs on a stream of its own, so a backward
// all-gather no longer queues behind the reduce-scatters on the FSDP group's stream (the
// simulator gives each group one stream: docs/ARCHITECTURE.md §5). Like torchtitan's it runs
// before bucketing, so buckets inherit the new group; the network tier (its stride) is unchanged.

import { fsdpMesh, meshGroup, type GraphNode, type StepGraph } from '../graph';
import { weakMemo } from '../util';

/** The FSDP process group of a graph's mesh: 'dp' on a 1-D mesh, else 'dp_shard'. */
export const fsdpGroupOf = (graph: StepGraph): string =>
  meshGroup(graph.meta.mesh ?? fsdpMesh(graph.meta.worldSize), 'dp_shard').group;

/** The group name an FSDP group's all-gathers move to (torchtitan's extra PG, group_desc 'fsdp_extra'). */
const fsdpAllGatherGroup = (fsdpGroup: string): string => `${fsdpGroup}_ag`;

/** `graph` with its FSDP all-gathers on their own process group; the graph itself when it has none. */
export function reassignFsdpAllGathers(graph: StepGraph): StepGraph {
  return cache(graph);
}

// one rewritten graph per graph, so the backends' per-graph caches (indexGraph) keep hitting
const cache = weakMemo((graph: StepGraph) => graph, reassign);

function reassign(graph: StepGraph): StepGraph {
  const fsdp = fsdpGroupOf(graph);
  const moved = fsdpAllGatherGroup(fsdp);
  let changed = false;
  const nodes = graph.nodes.map((n): GraphNode => {
    const c = n.collective;
    if (n.kind !== 'all_gather' || c === undefined || c.group !== fsdp) return n;
    changed = true;
    return { ...n, collective: { ...c, group: moved } };
  });
  return changed ? { ...graph, nodes } : graph;
}
