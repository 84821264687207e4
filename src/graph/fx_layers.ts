// Transformer-block index for the nodes of an imported FX graph, so per-block views and the
// transformer_block backend work on graphs torch made. A Llama block has two norms, so in the
// forward the k-th norm (0-based) opens block floor(k/2) and the last one is the final norm; a
// node belongs to the block of the latest norm at or before it. The backward runs the norms in
// reverse (final first): a node belongs to the block of the next norm backward at or after it.
// Collectives and their casts/waits take the block of the compute node they serve: an
// all-gather its weight's first reader, a reduce-scatter its gradient's producer.
// Applied only when the norm counts fit a block structure (2·L + 1); otherwise no layers.

import type { GraphNode, StepGraph } from './types';

const isNorm = (n: GraphNode, bwd: boolean): boolean =>
  n.kind === 'compute' &&
  /(rms_norm|layer_norm)/.test(String(n.attrs?.target ?? n.op)) &&
  /backward/.test(String(n.attrs?.target ?? '')) === bwd;

/** Block index per node id; undefined outside every block. */
type BlockOf = (number | undefined)[];

/** Returns the graph with `layer` set on its nodes, or unchanged when the structure does not fit. */
export function inferFxLayers(g: StepGraph): StepGraph {
  const region = normRegions(g.nodes);
  if (region === undefined) return g;
  const layer = collectiveLayers(g.nodes, region);
  return {
    ...g,
    nodes: g.nodes.map((n, i) => {
      const { layer: _old, ...rest } = n;
      return layer[i] === undefined ? (rest as GraphNode) : { ...rest, layer: layer[i] };
    }),
  };
}

/** The block of the norm region each node falls in, by phase; undefined when the norm counts fit no blocks. */
function normRegions(nodes: readonly GraphNode[]): BlockOf | undefined {
  const fwNorms = nodes.filter((n) => n.phase === 'forward' && isNorm(n, false)).map((n) => n.id);
  const bwNorms = nodes.filter((n) => n.phase === 'backward' && isNorm(n, true)).map((n) => n.id);
  const fwSet = new Set(fwNorms);
  const bwSet = new Set(bwNorms);
  const counts = [fwNorms.length, bwNorms.length].filter((c) => c > 0);
  if (counts.length === 0 || counts.some((c) => c < 3 || c % 2 === 0 || c !== counts[0])) return undefined;
  const L = (counts[0] - 1) / 2;
  const region = new Array<number | undefined>(nodes.length).fill(undefined);
  let k = -1;
  for (const n of nodes) {
    if (n.phase !== 'forward') continue;
    if (fwSet.has(n.id)) k++;
    region[n.id] = k >= 0 && k < 2 * L ? Math.floor(k / 2) : undefined;
  }
  let m = bwNorms.length;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i];
    if (n.phase !== 'backward') continue;
    if (bwSet.has(n.id)) m--;
    const next = m; // index of the next norm backward at or after this node
    region[i] = next < bwNorms.length && next >= 1 ? L - 1 - Math.floor((next - 1) / 2) : undefined;
  }
  return region;
}

/** Who reads and who writes each tensor. */
interface DataFlow {
  readonly nodes: readonly GraphNode[];
  readonly readers: Map<string, number[]>;
  readonly producer: Map<string, number>;
}

function dataFlow(nodes: readonly GraphNode[]): DataFlow {
  const readers = new Map<string, number[]>();
  const producer = new Map<string, number>();
  for (const n of nodes) {
    for (const t of n.inputs) {
      const rs = readers.get(t);
      if (rs) rs.push(n.id);
      else readers.set(t, [n.id]);
    }
    for (const t of n.outputs) producer.set(t, n.id);
  }
  return { nodes, readers, producer };
}

const isFree = (n: GraphNode): boolean => n.kind !== 'compute';

/** Breadth-first over cast/view/wait readers; the earliest compute reader in program order. */
function firstComputeReader({ nodes, readers }: DataFlow, id: number): number | undefined {
  const seen = new Set<number>([id]);
  let frontier = [id];
  let best: number | undefined;
  for (let depth = 0; depth < 16 && frontier.length > 0; depth++) {
    const next: number[] = [];
    for (const f of frontier) {
      for (const r of nodes[f].outputs.flatMap((t) => readers.get(t) ?? [])) {
        if (seen.has(r)) continue;
        seen.add(r);
        if (!isFree(nodes[r])) best = best === undefined ? r : Math.min(best, r);
        else next.push(r);
      }
    }
    frontier = next;
  }
  return best;
}

/** The compute node behind a node's first input, through up to 16 cast/view nodes. */
function computeProducer(flow: DataFlow, id: number, depth = 0): number | undefined {
  const p = flow.producer.get(flow.nodes[id].inputs[0]);
  if (p === undefined) return undefined;
  return !isFree(flow.nodes[p]) || depth >= 16 ? p : computeProducer(flow, p, depth + 1);
}

/** `region`, with each collective, its feeding casts and its wait in the block of the compute it serves. */
function collectiveLayers(nodes: readonly GraphNode[], region: Readonly<BlockOf>): BlockOf {
  const flow = dataFlow(nodes);
  const { readers, producer } = flow;
  const waitOf = new Map<string, number>();
  for (const n of nodes) if (n.kind === 'wait' && n.waitOf !== undefined) waitOf.set(n.waitOf, n.id);
  const layer = [...region];
  for (const n of nodes) {
    if (n.kind === 'all_gather') {
      const r = firstComputeReader(flow, n.id);
      if (r === undefined) continue;
      const chain = [n.id, ...upstreamFree(nodes, producer, n.id), ...nodesBetween(nodes, readers, n.id, r)];
      for (const c of chain) layer[c] = region[r];
    } else if (n.kind === 'reduce_scatter') {
      const p = computeProducer(flow, n.id);
      if (p === undefined) continue;
      const w = waitOf.get(n.name);
      for (const c of [n.id, ...upstreamFree(nodes, producer, n.id), ...(w !== undefined ? [w] : [])])
        layer[c] = region[p];
    }
  }
  return layer;
}

/** The cast/view chain that feeds a collective. */
function upstreamFree(nodes: readonly GraphNode[], producer: Map<string, number>, id: number): number[] {
  const out: number[] = [];
  let p = producer.get(nodes[id].inputs[0]);
  while (p !== undefined && nodes[p].kind !== 'compute' && out.length < 16) {
    out.push(p);
    p = producer.get(nodes[p].inputs[0]);
  }
  return out;
}

/** The non-compute nodes on the way from a collective to its first compute reader (wait, views). */
function nodesBetween(nodes: readonly GraphNode[], readers: Map<string, number[]>, from: number, to: number): number[] {
  const out: number[] = [];
  const seen = new Set<number>();
  const walk = (id: number, depth: number): boolean => {
    if (id === to) return true;
    if (depth > 16 || seen.has(id)) return false;
    seen.add(id);
    for (const r of nodes[id].outputs.flatMap((t) => readers.get(t) ?? [])) {
      if (nodes[r].kind === 'compute' && r !== to) continue;
      if (walk(r, depth + 1)) {
        if (r !== to) out.push(r);
        return true;
      }
    }
    return false;
  };
  walk(from, 0);
  return out;
}
