// simple_overlap (simple_overlap.ts) applied to a schedule's graph: the graph's nodes and tensors as
// the pass's nodes and buffers, the pass's order back as a graph. torch runs the pass in inductor's
// Scheduler after the FX passes; here it runs after a backend's schedule when the knob asks.

import type { StepGraph } from '../graph';
import { indexGraph } from './graph_index';
import { baseOf } from './memory_tracker';
import { nodeItems, rewriteGraph } from './rewrite';
import { type OverlapBuffer, type OverlapNode, simpleOverlap } from './simple_overlap';

const COLLECTIVE_KINDS = new Set(['all_gather', 'reduce_scatter', 'all_reduce']);

/**
 * One buffer per base tensor a node makes or the step reads without owning it: an alias allocates
 * nothing and its readers keep its base live (torch's views read their base's buffer); persistent
 * tensors are never freed.
 */
function buffersOf(graph: StepGraph): OverlapBuffer[] {
  const producer = new Map<string, string>();
  const users = new Map<string, Set<string>>();
  for (const n of graph.nodes) {
    for (const t of n.outputs) if (graph.tensors[t]?.aliasOf === undefined) producer.set(t, n.name);
    for (const t of n.inputs) {
      const base = baseOf(graph.tensors, t);
      if (!users.has(base)) users.set(base, new Set());
      users.get(base)!.add(n.name);
    }
  }
  const bases = new Set([...producer.keys(), ...users.keys()]);
  const out: OverlapBuffer[] = [];
  for (const id of bases) {
    const info = graph.tensors[id];
    const made = producer.get(id) ?? null;
    if (info === undefined || (made === null && info.persistent)) continue; // live all step: no swap moves it
    const bytes = info.bytes;
    out.push({
      name: id,
      producer: made,
      sizeAlloc: bytes,
      sizeFree: bytes,
      users: [...(users.get(id) ?? [])],
      graphOutput: info.persistent === true,
    });
  }
  return out;
}

function nodesOf(graph: StepGraph): OverlapNode[] {
  return graph.nodes.map((n) => ({
    name: n.name,
    kind: COLLECTIVE_KINDS.has(n.kind) ? 'collective' : n.kind === 'wait' ? 'wait' : 'other',
    outputs: n.outputs,
    deps: n.inputs,
  }));
}

/** The graph in simple_overlap's order (nodes renumbered; nothing else changes). */
export function simpleOverlapGraph(graph: StepGraph): StepGraph {
  const r = simpleOverlap(nodesOf(graph), buffersOf(graph));
  const index = indexGraph(graph);
  const at = new Map(graph.nodes.map((n) => [n.name, n.id]));
  return rewriteGraph(index, nodeItems(r.order.map((name) => at.get(name)!)), []).graph;
}
