// Dense, index-based view of a StepGraph that every backend plans on: producer map, CSR
// predecessor / successor lists, collective ↔ wait links and a stable topological order.
// Edges: read-after-write (a node depends on the producer of each tensor it reads) and
// wait-after-collective (a wait depends on the collective it completes).
// Malformed graphs are a GraphError naming the first bad node (index, kind, inputs).

import { GraphError, isCollectiveKind, kahnOrder } from '../graph';
import type { GraphNode, StepGraph } from '../graph';
import { sortAscending, weakMemo } from '../util';

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
  /** Tensor → the index of the node that writes it. */
  readonly producerOf: ReadonlyMap<string, number>;
  /**
   * Per node, aligned with its inputs: the index of the node that writes inputs[k], -1 for a graph
   * input, at inputSrc[inputOff[i] + k] (the producer lookups the index makes, kept for the passes).
   */
  readonly inputOff: Int32Array;
  readonly inputSrc: Int32Array;
}

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
  const nameIdx = nameIndex(src);
  const producer = producerIndex(src);
  const edges = sourceEdges(src, nameIdx, producer);
  checkCollectives(src, edges.waitOf);
  const order = topoOrderOf(src, edges.preds);
  const newOf = new Int32Array(src.length);
  order.forEach((old, i) => (newOf[old] = i));
  const nodes = order.map((old) => src[old]);
  // program order is usually topological already: then the source numbering is the new one
  const identity = order.every((old, i) => old === i);
  const csr = csrOf(order, newOf, edges.preds, identity);
  const producerOf = identity ? producer : new Map([...producer].map(([t, i]) => [t, newOf[i]]));
  const perNode = renumbered(nodes, order, newOf, edges, identity ? nameIdx : null);
  const inputs = identity ? edges.inputs : renumberedInputs(order, newOf, edges.inputs);
  return { graph, nodes, n: src.length, ...csr, ...perNode, producerOf, ...inputs };
}

/** Node name → source position; a repeated name is a GraphError. */
function nameIndex(src: readonly GraphNode[]): Map<string, number> {
  const nameIdx = new Map<string, number>();
  src.forEach((node, i) => {
    if (nameIdx.has(node.name)) throw badNode(i, node, `repeats the name of node ${nameIdx.get(node.name)}`);
    nameIdx.set(node.name, i);
  });
  return nameIdx;
}

/** Tensor → the source position of the node that writes it; a tensor written twice is a GraphError. */
function producerIndex(src: readonly GraphNode[]): Map<string, number> {
  const producer = new Map<string, number>();
  src.forEach((node, i) => {
    for (const t of node.outputs) {
      const p = producer.get(t);
      if (p !== undefined && p !== i) throw badNode(i, node, `writes tensor '${t}' already written by node ${p}`);
      producer.set(t, i);
    }
  });
  return producer;
}

/** The edges in source numbering: sorted distinct predecessors, placeholder counts, collective ↔ wait links. */
interface SourceEdges {
  readonly preds: number[][];
  readonly inputs: Pick<GraphIndex, 'inputOff' | 'inputSrc'>;
  readonly placeholders: Int32Array;
  readonly waitOf: Int32Array;
  readonly collOf: Int32Array;
}

function sourceEdges(
  src: readonly GraphNode[],
  nameIdx: ReadonlyMap<string, number>,
  producer: ReadonlyMap<string, number>,
): SourceEdges {
  const n0 = src.length;
  const preds: number[][] = new Array(n0);
  const placeholders = new Int32Array(n0);
  const seenStamp = new Int32Array(n0).fill(-1);
  const waitOf = new Int32Array(n0).fill(-1);
  const collOf = new Int32Array(n0).fill(-1);
  const inputOff = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) inputOff[i + 1] = inputOff[i] + src[i].inputs.length;
  const inputSrc = new Int32Array(inputOff[n0]);
  for (let i = 0; i < n0; i++) {
    const node = src[i];
    const ps: number[] = [];
    let placeholderCount = 0;
    for (let k = 0; k < node.inputs.length; k++) {
      const t = node.inputs[k];
      const p = producer.get(t);
      inputSrc[inputOff[i] + k] = p ?? -1;
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
      const c = linkWait(src, i, ps, nameIdx, producer, { waitOf, collOf });
      if (seenStamp[c] !== i) ps.push(c);
    }
    preds[i] = sortAscending(ps);
  }
  return { preds, placeholders, waitOf, collOf, inputs: { inputOff, inputSrc } };
}

/** The per-input producers in the new numbering. */
function renumberedInputs(
  order: readonly number[],
  newOf: Int32Array,
  src: Pick<GraphIndex, 'inputOff' | 'inputSrc'>,
): Pick<GraphIndex, 'inputOff' | 'inputSrc'> {
  const inputOff = new Int32Array(order.length + 1);
  const inputSrc = new Int32Array(src.inputSrc.length);
  order.forEach((old, i) => {
    const from = src.inputOff[old];
    const count = src.inputOff[old + 1] - from;
    inputOff[i + 1] = inputOff[i] + count;
    for (let k = 0; k < count; k++) {
      const p = src.inputSrc[from + k];
      inputSrc[inputOff[i] + k] = p < 0 ? -1 : newOf[p];
    }
  });
  return { inputOff, inputSrc };
}

/** Links wait `i` to the collective it completes (its position, returned); a bad wait is a GraphError. */
function linkWait(
  src: readonly GraphNode[],
  i: number,
  ps: readonly number[],
  nameIdx: ReadonlyMap<string, number>,
  producer: ReadonlyMap<string, number>,
  links: { waitOf: Int32Array; collOf: Int32Array },
): number {
  const node = src[i];
  const { waitOf, collOf } = links;
  const c = node.waitOf === undefined ? undefined : nameIdx.get(node.waitOf);
  if (c === undefined || !isCollectiveKind(src[c].kind)) {
    throw badNode(i, node, `waits on '${node.waitOf}', which is not a collective in the graph`);
  }
  // torch's coalesced reduce-scatter (autobucketing/coalesced.ts): a wait per output, each through a getitem
  const coalesced = /_coalesced\./.test(String(src[c].attrs?.target ?? ''));
  const viaGetitem = (p: number) => coalesced && src[p].inputs.every((t) => producer.get(t) === c);
  if (collOf[i] !== -1 || (waitOf[c] !== -1 && !coalesced)) {
    throw badNode(i, node, `is a second wait on '${node.waitOf}'`);
  }
  for (const p of ps) {
    if (p !== c && !viaGetitem(p)) throw badNode(i, node, `reads a tensor not produced by its collective`);
  }
  if (waitOf[c] === -1) waitOf[c] = i; // a coalesced collective: its first wait stands for it
  collOf[i] = c;
  return c;
}

function checkCollectives(src: readonly GraphNode[], waitOf: Int32Array): void {
  for (let i = 0; i < src.length; i++) {
    if (isCollectiveKind(src[i].kind)) {
      if (src[i].collective === undefined) throw badNode(i, src[i], 'is a collective without collective info');
      if (waitOf[i] === -1) throw badNode(i, src[i], 'is a collective that no wait completes');
    }
  }
}

/** The stable topological order; a cycle is a GraphError naming a node on it. */
function topoOrderOf(src: readonly GraphNode[], preds: readonly number[][]): number[] {
  try {
    return stableTopoOrder(src.length, preds);
  } catch (e) {
    const stuck = e instanceof GraphError && e.index !== undefined ? e.index : 0;
    throw badNode(stuck, src[stuck], 'is on a dependency cycle');
  }
}

/** CSR predecessor and successor lists in the new numbering. */
function csrOf(
  order: readonly number[],
  newOf: Int32Array,
  preds: readonly number[][],
  identity: boolean,
): Pick<GraphIndex, 'predOff' | 'predIdx' | 'succOff' | 'succIdx'> {
  const n0 = order.length;
  const predOff = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) predOff[i + 1] = predOff[i] + preds[order[i]].length;
  const predIdx = new Int32Array(predOff[n0]);
  const succCount = new Int32Array(n0 + 1);
  for (let i = 0; i < n0; i++) {
    const ps = identity ? preds[i] : sortAscending(preds[order[i]].map((p) => newOf[p]));
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
  return { predOff, predIdx, succOff, succIdx };
}

/** The per-node arrays in the new numbering. */
function renumbered(
  nodes: readonly GraphNode[],
  order: readonly number[],
  newOf: Int32Array,
  edges: SourceEdges,
  sourceNames: ReadonlyMap<string, number> | null, // the name index, when the numbering did not change
): Pick<GraphIndex, 'waitOfColl' | 'collOfWait' | 'isCompute' | 'placeholderInputs' | 'indexOfName'> {
  const n0 = order.length;
  const waitOfColl = new Int32Array(n0).fill(-1);
  const collOfWait = new Int32Array(n0).fill(-1);
  const isCompute = new Uint8Array(n0);
  const placeholderInputs = new Int32Array(n0);
  const indexOfName = sourceNames ?? new Map(nodes.map((node, i) => [node.name, i]));
  for (let i = 0; i < n0; i++) {
    const old = order[i];
    if (edges.waitOf[old] !== -1) waitOfColl[i] = newOf[edges.waitOf[old]];
    if (edges.collOf[old] !== -1) collOfWait[i] = newOf[edges.collOf[old]];
    isCompute[i] = nodes[i].kind === 'compute' && nodes[i].matmulLike ? 1 : 0;
    placeholderInputs[i] = edges.placeholders[old];
  }
  return { waitOfColl, collOfWait, isCompute, placeholderInputs, indexOfName };
}

/** Kahn's algorithm; among ready nodes the smallest original index goes first (stable). */
function stableTopoOrder(n: number, preds: readonly number[][]): number[] {
  // fast path: program order is already topological
  let sorted = true;
  for (let i = 0; i < n && sorted; i++) for (const p of preds[i]) if (p > i) sorted = false;
  if (sorted) return Array.from({ length: n }, (_, i) => i);
  return kahnOrder(
    n,
    preds.flatMap((ps, to) => ps.map((from) => ({ from, to }))),
  );
}
