// Dependencies of a step graph and topological ordering (tinygrad's habit: in-degree counts
// and a queue, throw on a cycle, and every edge says why it exists). Backends use these to
// check that a reordered schedule still respects the program.

import { PyHeap } from './heap';
import { GraphError } from './graph_errors';
import type { StepGraph } from './types';

type EdgeWhy = 'read-after-write' | 'wait-after-collective';

export interface Edge {
  readonly from: number; // node id that must run first
  readonly to: number;
  readonly why: EdgeWhy;
  readonly tensor?: string; // for read-after-write: the tensor carried
}

/**
 * One edge per (producer, consumer) pair: a node reading a tensor depends on the node that
 * writes it; a wait depends on its collective (named by waitOf; reported as
 * wait-after-collective even though it also reads its output). Sorted by (to, from).
 */
export function dependencies(g: StepGraph): Edge[] {
  const producer = new Map<string, number>();
  const byName = new Map<string, number>();
  g.nodes.forEach((n, i) => {
    byName.set(n.name, i);
    for (const t of n.outputs) if (!producer.has(t)) producer.set(t, i);
  });
  const edges: Edge[] = [];
  g.nodes.forEach((n, i) => {
    const seen = new Set<number>();
    if (n.kind === 'wait' && n.waitOf !== undefined) {
      const c = byName.get(n.waitOf);
      if (c !== undefined && c !== i) {
        seen.add(c);
        edges.push({ from: c, to: i, why: 'wait-after-collective' });
      }
    }
    for (const t of n.inputs) {
      const p = producer.get(t);
      if (p === undefined || p === i || seen.has(p)) continue;
      seen.add(p);
      edges.push({ from: p, to: i, why: 'read-after-write', tensor: t });
    }
  });
  edges.sort((a, b) => a.to - b.to || a.from - b.from);
  return edges;
}

/** True when `order` is a permutation of the node ids that respects every dependency. */
export function isTopologicalOrder(g: StepGraph, order: readonly number[]): boolean {
  const n = g.nodes.length;
  if (order.length !== n) return false;
  const pos = new Array<number>(n).fill(-1);
  for (let k = 0; k < n; k++) {
    const id = order[k];
    if (!Number.isInteger(id) || id < 0 || id >= n || pos[id] !== -1) return false;
    pos[id] = k;
  }
  return dependencies(g).every((e) => pos[e.from] < pos[e.to]);
}

/**
 * Kahn's algorithm over `nodeCount` nodes; among ready nodes the smallest `key` goes first (by
 * default the id itself, so a graph already in program order comes back unchanged). Throws
 * GraphError on a cycle.
 */
export function kahnOrder(
  nodeCount: number,
  edges: readonly Pick<Edge, 'from' | 'to'>[],
  key: (node: number) => readonly number[] = (i) => [i],
): number[] {
  // successors as CSR, each node's in edge order (a list per node was the sort's largest allocation)
  const indeg = new Int32Array(nodeCount);
  const succOff = new Int32Array(nodeCount + 1);
  for (const e of edges) {
    succOff[e.from + 1]++;
    indeg[e.to]++;
  }
  for (let i = 0; i < nodeCount; i++) succOff[i + 1] += succOff[i];
  const fill = succOff.slice(0, nodeCount);
  const succ = new Int32Array(edges.length);
  for (const e of edges) succ[fill[e.from]++] = e.to;
  const heap = new PyHeap();
  for (let i = 0; i < nodeCount; i++) if (indeg[i] === 0) heap.push(key(i), i);
  const out: number[] = [];
  while (heap.size > 0) {
    const i = heap.pop().node;
    out.push(i);
    for (let k = succOff[i]; k < succOff[i + 1]; k++) {
      const j = succ[k];
      if (--indeg[j] === 0) heap.push(key(j), j);
    }
  }
  if (out.length !== nodeCount) {
    const stuck = indeg.findIndex((d) => d > 0);
    throw new GraphError(
      `dependency cycle: ${nodeCount - out.length} nodes never become ready (first: node ${stuck})`,
      stuck,
    );
  }
  return out;
}

/** A topological order of the graph's nodes (program order when the graph is valid). */
export function topoOrder(g: StepGraph): number[] {
  const order = kahnOrder(g.nodes.length, dependencies(g));
  return order;
}
