// Dense, index-based view of a StepGraph that every backend plans on: producer map, CSR
// predecessor / successor lists, collective ↔ wait links and a stable topological order.
// Edges: read-after-write (a node depends on the producer of each tensor it reads) and
// wait-after-collective (a wait depends on the collective it completes).
// Malformed graphs are a GraphError naming the first bad node (index, kind, inputs).

import { GraphError } from '../graph/errors';
import { kahnOrder } from '../graph/toposort';
import type { GraphNode, StepGraph } from '../graph';
import { weakMemo } from '../util';

export interface GraphIndex {
  readonly graph: StepGraph;
  /** Nodes in a stable topological order (program order when it already is one). */
  readonly nodes: readonly GraphNode[];
  readonly n: number;
  /** CSR: preds of node i are predIdx[predOff[i] .. predOff[i+1]). Distinct, sorted ascending. */
  readonly predOff: Int32Array;
  readonly predIdx: Int32Array;
  readonly succOff: Int32Array;
  readonly succIdx: Int32Array;
  /** For a collective: index of its wait; for others -1. */
  readonly waitOfColl: Int32Array;
  /** For a wait: index of its collective; for others -1. */
  readonly collOfWait: Int32Array;
  /** 1 for matmul-like compute nodes (the nodes the overlap scheduler hides communication behind). */
  readonly isCompute: Uint8Array;
  /** Number of inputs without a producer node (graph inputs: shards, tokens), FX's placeholders. */
  readonly placeholderInputs: Int32Array;
  readonly indexOfName: ReadonlyMap<string, number>;
}

const isCollectiveKind = (k: string) => k === 'all_gather' || k === 'reduce_scatter' || k === 'all_reduce';

function badNode(i: number, node: GraphNode, why: string): GraphError {
  const message = `graph node ${i} (${node.kind} '${node.name}', inputs [${node.inputs.join(', ')}]) ${why}`;
  return new GraphError(message, i, node.name, node.kind, node.inputs);
}

const CACHE = weakMemo((graph: StepGraph) => graph, buildIndex);

/**
 * Builds the index (cached per graph object: graphs are immutable, and the UI runs every backend
 * on the same graph); throws GraphError on duplicate names, dangling or missing waits, or cycles.
 */
export function indexGraph(graph: StepGraph): GraphIndex {
  return CACHE(graph);
}

function buildIndex(graph: StepGraph): GraphIndex {
  const src = graph.nodes;
  const n0 = src.length;
  const nameIdx = new Map<string, number>();
  src.forEach((node, i) => {
    if (nameIdx.has(node.name)) throw badNode(i, node, `repeats the name of node ${nameIdx.get(node.name)}`);
    nameIdx.set(node.name, i);
  });
  const producer = new Map<string, number>();
  src.forEach((node, i) => {
    for (const t of node.outputs) {
      const p = producer.get(t);
      if (p !== undefined && p !== i) throw badNode(i, node, `writes tensor '${t}' already written by node ${p}`);
      producer.set(t, i);
    }
  });
  // predecessors in source numbering
  const preds: number[][] = new Array(n0);
  const placeholders = new Int32Array(n0);
  const seenStamp = new Int32Array(n0).fill(-1);
  const waitOf0 = new Int32Array(n0).fill(-1);
  const collOf0 = new Int32Array(n0).fill(-1);
  for (let i = 0; i < n0; i++) {
    const node = src[i];
    const ps: number[] = [];
    let placeholderCount = 0;
    for (let k = 0; k < node.inputs.length; k++) {
      const t = node.inputs[k];
      const p = producer.get(t);
      if (p === undefined) {
        if (node.inputs.indexOf(t) === k) placeholderCount++;
      } else if (p === i) throw badNode(i, node, `reads its own output '${t}'`);
      else if (seenStamp[p] !== i) {
        seenStamp[p] = i;
        ps.push(p);
      }
    }
    placeholders[i] = placeholderCount;
    if (node.kind === 'wait') {
      const c = node.waitOf === undefined ? undefined : nameIdx.get(node.waitOf);
      if (c === undefined || !isCollectiveKind(src[c].kind)) {
        throw badNode(i, node, `waits on '${node.waitOf}', which is not a collective in the graph`);
      }
      // torch's coalesced reduce-scatter (autobucketing/coalesced.ts): a wait per output, each through a getitem
      const coalesced = /_coalesced\./.test(String(src[c].attrs?.target ?? ''));
      const viaGetitem = (p: number) => coalesced && src[p].inputs.every((t) => producer.get(t) === c);
      if (collOf0[i] !== -1 || (waitOf0[c] !== -1 && !coalesced)) {
        throw badNode(i, node, `is a second wait on '${node.waitOf}'`);
      }
      for (const p of ps) {
        if (p !== c && !viaGetitem(p)) throw badNode(i, node, `reads a tensor not produced by its collective`);
      }
      if (seenStamp[c] !== i) ps.push(c);
      if (waitOf0[c] === -1) waitOf0[c] = i; // a coalesced collective: its first wait stands for it
      collOf0[i] = c;
    }
    preds[i] = ps.length > 1 ? ps.sort((a, b) => a - b) : ps;
  }
  for (let i = 0; i < n0; i++) {
    if (isCollectiveKind(src[i].kind)) {
      if (src[i].collective === undefined) throw badNode(i, src[i], 'is a collective without collective info');
      if (waitOf0[i] === -1) throw badNode(i, src[i], 'is a collective that no wait completes');
    }
  }
  let order: number[];
  try {
    order = stableTopoOrder(n0, preds);
  } catch (e) {
    const stuck = e instanceof GraphError && e.index !== undefined ? e.index : 0;
    throw badNode(stuck, src[stuck], 'is on a dependency cycle');
  }
  const newOf = new Int32Array(n0);
  order.forEach((old, i) => (newOf[old] = i));
  const nodes = order.map((old) => src[old]);
  const predOff = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) predOff[i + 1] = predOff[i] + preds[order[i]].length;
  const predIdx = new Int32Array(predOff[n0]);
  const succCount = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) {
    const ps = preds[order[i]].map((p) => newOf[p]).sort((a, b) => a - b);
    predIdx.set(ps, predOff[i]);
    for (const p of ps) succCount[p + 1]++;
  }
  const succOff = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) succOff[i + 1] = succOff[i] + succCount[i + 1];
  const fill = succOff.slice(0, n0);
  const succIdx = new Int32Array(succOff[n0]);
  for (let i = 0; i < n0; i++) {
    for (let k = predOff[i]; k < predOff[i + 1]; k++) succIdx[fill[predIdx[k]]++] = i;
  }
  const waitOfColl = new Int32Array(n0).fill(-1);
  const collOfWait = new Int32Array(n0).fill(-1);
  const isCompute = new Uint8Array(n0);
  const placeholderInputs = new Int32Array(n0);
  const indexOfName = new Map<string, number>();
  for (let i = 0; i < n0; i++) {
    const old = order[i];
    if (waitOf0[old] !== -1) waitOfColl[i] = newOf[waitOf0[old]];
    if (collOf0[old] !== -1) collOfWait[i] = newOf[collOf0[old]];
    isCompute[i] = nodes[i].kind === 'compute' && nodes[i].matmulLike ? 1 : 0;
    placeholderInputs[i] = placeholders[old];
    indexOfName.set(nodes[i].name, i);
  }
  return {
    graph, nodes, n: n0, predOff, predIdx, succOff, succIdx, waitOfColl, collOfWait, isCompute,
    placeholderInputs, indexOfName,
  };
}

/** Kahn's algorithm; among ready nodes the smallest original index goes first (stable). */
function stableTopoOrder(n: number, preds: readonly number[][]): number[] {
  // fast path: program order is already topological
  let sorted = true;
  for (let i = 0; i < n && sorted; i++) for (const p of preds[i]) if (p > i) sorted = false;
  if (sorted) return Array.from({ length: n }, (_, i) => i);
  return kahnOrder(n, preds.flatMap((ps, to) => ps.map((from) => ({ from, to }))));
}
