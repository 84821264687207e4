// graph_trainer's EP-overlap chunking (`--compile.ep_overlap.*`; torchtitan b5bcd76,
// experiments/graph_trainer/ep_chunk_pass.py, ep_eager_chunk.py: both strategies make these two
// chunks). Each selected region that holds an EP all-to-all — a block's MoE (`layers.*.moe`) or the
// whole MoE block (`layers.*`), its forward and its backward apart — runs twice, on half the batch or
// half the sequence:
//  - the body is the region's nodes reached by the chunked tokens (_chunk_influenced_region_nodes):
//    the parameters' casts, all-gathers and waits read no token and stay shared, and so do the
//    gradients' casts and reduce-scatters (the grad escape suffix); only EP collectives are copied;
//  - a token live-in from outside is split; one made per chunk by an earlier region (the forward's,
//    read by the backward) is read per chunk (its provenance);
//  - a live-out read outside the body is made whole: cat, or add of two partial gradients.
// chunkEpRegions returns the regions unordered; backends/ep_overlap.ts orders each per
// ep_overlap_pass.py's contract and assembleChunked places them in the step. The simulator gives `ep`
// its own stream already, which is what ep_process_group_pass.py ensures.

import { ConfigError } from '../errors';
import { GraphError } from './graph_errors';
import { CHUNK_IDS, chunkName, chunkNode, chunkTensor, materializeNode, splitNodes } from './ep_chunk_nodes';
import { kahnOrder, dependencies } from './toposort';
import type { GraphNode, Phase, StepGraph, TensorInfo } from './types';
import { TARGETS, TOKENS } from './ops';

export const EP_CHUNK_DIMS = ['batch', 'seq'] as const;
export type EpChunkDim = (typeof EP_CHUNK_DIMS)[number];
/** configs.py SUPPORTED_EP_OVERLAP_MODULE_FQNS: transformer blocks, or their MoE modules. */
export const EP_MODULE_FQNS = ['layers.*', 'layers.*.moe'] as const;
export type EpModuleFqn = (typeof EP_MODULE_FQNS)[number];
/** configs.py EpOverlapChunkStrategy: eager wraps the module, graph chunks the traced graph; same chunks. */
export const EP_CHUNK_STRATEGIES = ['eager', 'graph'] as const;
export type EpChunkStrategy = (typeof EP_CHUNK_STRATEGIES)[number];

export interface EpChunkOptions {
  readonly chunkDim: EpChunkDim;
  readonly moduleFqn: EpModuleFqn;
}

/** One chunked region: its body per chunk in program order, and the boundary nodes the pass made. */
export interface ChunkedRegion {
  readonly root: string; // 'layers.3.moe' or 'layers.3'
  readonly phase: Phase;
  readonly splits: readonly GraphNode[];
  readonly bodies: readonly [readonly GraphNode[], readonly GraphNode[]];
  readonly materializations: readonly GraphNode[];
  /** Positions in the source graph of its first and last body node. */
  readonly span: readonly [number, number];
}

/** A graph's chunked regions, and the source graph's nodes and tensors they do not replace. */
export interface ChunkedStep {
  readonly source: StepGraph;
  readonly regions: readonly ChunkedRegion[];
  /** The source nodes outside every body, with their source positions. */
  readonly outside: readonly { readonly node: GraphNode; readonly at: number }[];
  readonly tensors: Readonly<Record<string, TensorInfo>>;
}

/** Tensors that carry the token dim: from the step's tokens, never a parameter gradient or the router's counts. */
function tokenTensors(g: StepGraph, paramGrads: ReadonlySet<string>): Set<string> {
  const tokens = new Set<string>([TOKENS, TARGETS]);
  for (const n of g.nodes) {
    if (!n.inputs.some((t) => tokens.has(t))) continue;
    n.outputs.forEach((t, k) => {
      const counts = n.op === 'router_topk' && k === 2; // ops.ts: [scores, ids, counts]
      if (!counts && !paramGrads.has(t)) tokens.add(t);
    });
  }
  return tokens;
}

/** The MoE layers whose forward issues an all-to-all (ep_chunk_pass.py _ep_roots), as region roots. */
function regionRoots(g: StepGraph, fqn: EpModuleFqn): { root: string; layer: number }[] {
  const layers = new Set<number>();
  for (const n of g.nodes)
    if (n.kind === 'all_to_all' && n.phase === 'forward' && n.layer !== undefined) layers.add(n.layer);
  return [...layers]
    .sort((a, b) => a - b)
    .map((layer) => ({
      layer,
      root: fqn === 'layers.*' ? `layers.${layer}` : `layers.${layer}.moe`,
    }));
}

/** Whether `n` belongs to the module `root` in `phase` (the residual add is its block's, not the MoE's). */
function inModule(n: GraphNode, root: string, layer: number, phase: Phase): boolean {
  if (n.phase !== phase || n.layer !== layer) return false;
  return root === `layers.${layer}` || (n.name.startsWith(`${root}.`) && !n.name.startsWith(`${root}.residual`));
}

/** Positions of the body: module nodes reading a token tensor or a tensor the body made (not a gradient). */
function bodyOf(
  g: StepGraph,
  inRegion: (n: GraphNode) => boolean,
  tokens: ReadonlySet<string>,
  grads: ReadonlySet<string>,
) {
  const made = new Set<string>();
  const body: number[] = [];
  g.nodes.forEach((n, i) => {
    if (!inRegion(n) || !n.inputs.some((t) => made.has(t) || tokens.has(t))) return;
    body.push(i);
    for (const t of n.outputs) if (!grads.has(t)) made.add(t);
  });
  return body;
}

interface ChunkState {
  readonly g: StepGraph;
  readonly opts: EpChunkOptions;
  readonly tokens: ReadonlySet<string>;
  readonly grads: ReadonlySet<string>;
  readonly tensors: Record<string, TensorInfo>;
  /** Tensors that exist per chunk (provenance), read as such by later regions. */
  readonly perChunk: Set<string>;
  /** Tensors a node outside every body reads: a body output among them must be made whole. */
  readonly readOutside: ReadonlySet<string>;
}

/** A token all-to-all's label (moe.ts names them `.dispatch.` / `.combine.`); the counts exchange has none. */
function exchangeOf(s: ChunkState, n: GraphNode): string | undefined {
  if (n.kind !== 'all_to_all' || !s.tokens.has(n.inputs[0])) return undefined;
  return n.name.includes('.dispatch.') ? 'dispatch' : n.name.includes('.combine.') ? 'combine' : 'all_to_all';
}

/** What a body node of chunk `c` reads: the chunk of a tensor that exists per chunk, else the shared one. */
const chunkInput = (s: ChunkState, c: 0 | 1) => (t: string) => (s.perChunk.has(t) ? chunkName(t, c) : t);

/** The body's outputs per chunk: token tensors halved, the rest (partial gradients, counts) whole. */
function addChunkTensors(s: ChunkState, outputs: readonly string[]): void {
  for (const t of outputs) {
    const info = s.tensors[t];
    for (const c of CHUNK_IDS) {
      const alias = info.aliasOf !== undefined && s.perChunk.has(info.aliasOf) ? chunkName(info.aliasOf, c) : undefined;
      s.tensors[chunkName(t, c)] = chunkTensor(info, c, s.tokens.has(t), alias ?? info.aliasOf);
    }
  }
}

interface PlannedRegion {
  readonly root: string;
  readonly layer: number;
  readonly phase: Phase;
  readonly body: readonly number[];
}

/** Lowers one planned region: splits its live-ins, copies its body per chunk, materializes its live-outs. */
function chunkRegion(s: ChunkState, p: PlannedRegion): ChunkedRegion {
  const seq = s.opts.chunkDim === 'seq';
  const at = { phase: p.phase, layer: p.layer };
  const nodes = p.body.map((i) => s.g.nodes[i]);
  const made = new Set(nodes.flatMap((n) => n.outputs));
  const splits: GraphNode[] = [];
  for (const t of nodes.flatMap((n) => n.inputs)) {
    if (made.has(t) || s.perChunk.has(t) || !s.tokens.has(t)) continue;
    splits.push(...splitNodes(s.tensors[t], seq, at, s.tensors));
    s.perChunk.add(t);
  }
  for (const n of nodes) {
    addChunkTensors(s, n.outputs);
    for (const t of n.outputs) s.perChunk.add(t);
  }
  const bodies = CHUNK_IDS.map((c) =>
    nodes.map((n) => {
      const outputs = n.outputs.map((t) => chunkName(t, c));
      const io = { inputs: n.inputs.map(chunkInput(s, c)), outputs, region: p.root, exchange: exchangeOf(s, n) };
      return chunkNode(n, c, io, s.tensors, seq);
    }),
  ) as [GraphNode[], GraphNode[]];
  const materializations: GraphNode[] = [];
  for (const t of made) {
    if (!s.readOutside.has(t)) {
      delete s.tensors[t]; // no reader outside a body: only its chunks exist
      continue;
    }
    if (!s.tokens.has(t) && !s.grads.has(t)) throw new GraphError(`ep chunking cannot make ${t} whole for its readers`);
    materializations.push(materializeNode(s.tensors[t], s.grads.has(t), at, s.tensors));
  }
  return {
    root: p.root,
    phase: p.phase,
    splits,
    bodies,
    materializations,
    span: [p.body[0], p.body[p.body.length - 1]],
  };
}

/** ep_eager_chunk.py: "ep_overlap eager chunking requires an even {chunk_dim} extent". */
function checkEvenExtent(g: StepGraph, dim: EpChunkDim): void {
  const [field, extent] = dim === 'batch' ? ['localBatch', g.meta.batch] : ['seqLen', g.meta.seqLen];
  if (extent % 2 === 0) return;
  throw new ConfigError(field, `${field} must be even to chunk it in two (epOverlap.chunkDim '${dim}'), got ${extent}`);
}

/** The regions of `g` that `opts` selects, chunked in two (in the pass's order; not yet scheduled). */
export function chunkEpRegions(g: StepGraph, opts: EpChunkOptions): ChunkedStep {
  checkEvenExtent(g, opts.chunkDim);
  const grads = new Set(g.params.map((p) => `${p.name}.grad`));
  const tokens = tokenTensors(g, grads);
  const roots = regionRoots(g, opts.moduleFqn);
  const planned: PlannedRegion[] = (['forward', 'backward'] as const)
    .flatMap((phase) =>
      roots.map((r) => ({ ...r, phase, body: bodyOf(g, (n) => inModule(n, r.root, r.layer, phase), tokens, grads) })),
    )
    .filter((p) => p.body.length > 0)
    .sort((a, b) => a.body[0] - b.body[0]); // program order: a region reads what earlier ones chunked
  if (planned.length === 0) {
    // ep_chunk_pass.py: "No EP all-to-all regions matched"
    throw new ConfigError('epOverlap.enabled', `epOverlap found no ${opts.moduleFqn} region with an EP all-to-all`);
  }
  const inBody = new Set(planned.flatMap((p) => p.body));
  const readOutside = new Set(g.nodes.flatMap((n, i) => (inBody.has(i) ? [] : n.inputs)));
  const s: ChunkState = { g, opts, tokens, grads, tensors: { ...g.tensors }, perChunk: new Set(), readOutside };
  const regions = planned.map((p) => chunkRegion(s, p));
  const outside = g.nodes.map((node, at) => ({ node, at })).filter((o) => !inBody.has(o.at));
  return { source: g, regions, outside, tensors: s.tensors };
}

/** Each region's first position, for every source position its span covers; refuses overlapping spans. */
function spanStarts(step: ChunkedStep): Int32Array {
  const first = new Int32Array(step.source.nodes.length).fill(-1);
  for (const r of step.regions) {
    for (let p = r.span[0]; p <= r.span[1]; p++) {
      if (first[p] !== -1) throw new GraphError(`chunked regions overlap at ${r.root} (${r.phase})`, p);
      first[p] = r.span[0];
    }
  }
  return first;
}

/**
 * For each source node inside a span that a region's body reads (through others inside it too):
 * the position in the region's sequence of its first reader. The rest of a span reads the body or
 * nothing of it.
 */
function firstUses(step: ChunkedStep, nodes: readonly GraphNode[], inSpan: (i: number) => number, seqStart: number[]) {
  const producer = new Map<string, number>();
  nodes.forEach((n, i) => {
    for (const t of n.outputs) producer.set(t, i);
  });
  const use = new Map<number, number>();
  step.regions.forEach((r, k) => {
    for (let j = 0; j < seqStart[k + 1] - seqStart[k]; j++) {
      const stack = [seqStart[k] + j];
      while (stack.length > 0) {
        const i = stack.pop() as number;
        for (const t of nodes[i].inputs) {
          const p = producer.get(t);
          if (p === undefined || inSpan(p) !== r.span[0] || use.has(p)) continue;
          use.set(p, j);
          stack.push(p);
        }
      }
    }
  });
  return use;
}

/**
 * The step graph with each region's nodes in `sequences[k]`'s order, placed where its body began.
 * The source's other nodes keep their order; one inside a region's span that the body reads (a
 * weight's cast, all-gather, wait) runs just before its first reader, as torchtitan's bucketing and
 * stable topological sort leave it; one that reads the body (a gradient's cast and reduce-scatter)
 * as soon as what it reads is ready.
 */
export function assembleChunked(step: ChunkedStep, sequences: readonly (readonly GraphNode[])[]): StepGraph {
  const first = spanStarts(step);
  const nodes: GraphNode[] = step.outside.map((o) => o.node);
  const inSpan = (i: number) => (i < step.outside.length ? first[step.outside[i].at] : -1);
  const seqStart = [nodes.length];
  const chain: { from: number; to: number }[] = [];
  for (const seq of sequences) {
    seq.forEach((n, j) => {
      if (j > 0) chain.push({ from: nodes.length - 1, to: nodes.length });
      nodes.push(n);
    });
    seqStart.push(nodes.length);
  }
  const use = firstUses(step, nodes, inSpan, seqStart);
  const keys = nodes.map((_, i): number[] => {
    if (i >= step.outside.length) {
      const k = seqStart.findIndex((s) => s > i) - 1;
      return [step.regions[k].span[0], 1, i - seqStart[k], 1, 0];
    }
    const at = step.outside[i].at;
    const j = use.get(i);
    if (first[at] === -1) return [at, 0, 0, 0, 0];
    return j === undefined ? [first[at], 0, at, 0, 0] : [first[at], 1, j, 0, at];
  });
  const unordered = { ...step.source, nodes, tensors: step.tensors };
  const order = kahnOrder(nodes.length, [...dependencies(unordered), ...chain], (i) => keys[i]);
  return { ...unordered, nodes: order.map((i, id) => (nodes[i].id === id ? nodes[i] : { ...nodes[i], id })) };
}

/** Inserts each materialization right after the last node it reads from. */
export function withMaterializations(sequence: readonly GraphNode[], mats: readonly GraphNode[]): GraphNode[] {
  const pending = new Map(mats.map((m) => [m, new Set(m.inputs)]));
  const out: GraphNode[] = [];
  for (const n of sequence) {
    out.push(n);
    for (const [m, waiting] of pending) {
      for (const t of n.outputs) waiting.delete(t);
      if (waiting.size > 0) continue;
      out.push(m);
      pending.delete(m);
    }
  }
  return [...out, ...pending.keys()];
}
