// The communicators of a live run: one SharedArrayBuffer communicator per process-group instance
// of the mesh (a 2 × 2 FSDP × TP mesh has two tp groups and two dp_shard groups), each sized for the
// largest per-rank chunk its group's collectives move. A rank gets the instances it is a member of.

import type { GraphNode, StepGraph } from '../graph';
import { isOneDim, meshGroup } from '../graph';
import { createCommInit, type CollectiveAlgorithm } from './comm';
import { elemsOf } from './exec';
import { isPlainFsdp, liveDims, meshGroupInstance, meshOfGraph } from './mesh_ranks';
import type { GroupCommInit } from './rank';

/**
 * The process groups live ranks need: every mesh dimension of size > 1 ('dp' on a 1-D mesh, whatever its
 * size; with expert parallel, ep and efsdp too).
 */
function liveGroups(graph: StepGraph): string[] {
  const mesh = meshOfGraph(graph.meta);
  const dp = meshGroup(mesh, 'dp_shard').group;
  const sized = liveDims(mesh)
    .map((d) => meshGroup(mesh, d))
    .filter((g) => g.size > 1)
    .map((g) => g.group);
  return [...new Set(isOneDim(mesh) ? [dp, ...sized] : sized)];
}

/**
 * Largest per-rank chunk (f32 elements) each group's collectives move: an all-gather's input, a
 * reduce-scatter's output, an all-reduce's 1/n share (it runs as both); the tp group also carries
 * the loss-parallel row statistics ([T] per rank, exec/loss_parallel.ts).
 */
export function maxElemsByGroup(graph: StepGraph): Map<string, number> {
  const out = new Map<string, number>(liveGroups(graph).map((g) => [g, 1]));
  const sum = (ids: readonly string[]) => ids.reduce((s, id) => s + elemsOf(graph.tensors, id), 0);
  for (const node of graph.nodes) {
    const c = node.collective;
    if (c !== undefined && node.kind !== 'wait') {
      const elems =
        node.kind === 'all_gather'
          ? sum(node.inputs)
          : node.kind === 'reduce_scatter'
            ? sum(node.outputs)
            : node.kind === 'all_to_all'
              ? allToAllElems(graph, node)
              : Math.ceil(sum(node.inputs) / c.groupSize);
      out.set(c.group, Math.max(out.get(c.group) ?? 1, elems));
    }
    const tp = out.get('tp');
    if (node.op === 'cross_entropy' && tp !== undefined) out.set('tp', Math.max(tp, Number(node.attrs?.T)));
  }
  return out;
}

/**
 * An all-to-all's input is data-dependent (the rows the router sent here): at worst every rank of the
 * group sends all its T·k rows to one rank, groupSize × the smaller side, which the region of n·M must hold.
 */
function allToAllElems(graph: StepGraph, node: GraphNode): number {
  const [inElems, outElems] = [node.inputs[0], node.outputs[0]].map((id) => elemsOf(graph.tensors, id));
  return Math.min(inElems, outElems);
}

/** Per rank (index = global rank), the communicators of the groups it belongs to. */
export function createMeshComms(
  graph: StepGraph,
  opts: { readonly timeoutMs: number; readonly algorithm: CollectiveAlgorithm; readonly spinUs?: number },
): GroupCommInit[][] {
  const mesh = meshOfGraph(graph.meta);
  const world = graph.meta.worldSize;
  const perRank: GroupCommInit[][] = Array.from({ length: world }, () => []);
  for (const [group, maxElems] of maxElemsByGroup(graph)) {
    for (let rank = 0; rank < world; rank++) {
      const g = meshGroupInstance(mesh, group, rank);
      if (g.localRank !== 0) continue; // each instance is built once, by its first member
      const init = createCommInit(g.members.length, maxElems, {
        ...opts,
        ...(isPlainFsdp(mesh) ? {} : { group: { name: group, ranks: g.members } }),
      });
      g.members.forEach((member, localRank) => perRank[member].push({ group, init, localRank }));
    }
  }
  return perRank;
}
