// A step graph's FX graphs as the ManualGraph torch's manual pass reads (docs/ARCHITECTURE.md §5):
// jit runs the pass on the forward and the backward graph apart, aot_fx_trace (meta.jointGraph) on
// one forward + backward graph. What torch reads off an FX node is read off ours: a parameter
// collective is an FSDP one (torch's one-placeholder test), every all-reduce is a candidate (as in
// torch), a cast read only by an all-gather is folded into its bucket, compute is matmul-like, and
// the module is the parameter's module (else 'layers.N' for a block's node, else the name's head).

import type { GraphNode, ParamInfo, StepGraph } from '../../graph';
import type { GraphIndex } from '../graph_index';
import { bucketKey } from '../rewrite';
import type { ManualGraph } from './manual_graph';

/** One FX graph of the step: its nodes (graph-index numbers, program order) and its phase. */
export interface ManualRegion {
  readonly nodes: readonly number[];
  readonly phase: 'forward' | 'backward' | 'joint';
}

/** The graphs torch's pass runs on: forward and backward (jit), or one joint graph (aot_fx_trace). */
export function manualRegions(ix: GraphIndex): ManualRegion[] {
  const of = (pred: (n: GraphNode) => boolean) => ix.nodes.flatMap((n, i) => (pred(n) ? [i] : []));
  if (ix.graph.meta.jointGraph) return [{ nodes: of((n) => n.phase !== 'optimizer'), phase: 'joint' }];
  return (['forward', 'backward'] as const).map((phase) => ({ nodes: of((n) => n.phase === phase), phase }));
}

/** The module fqn a node was traced in: 'layers.3.attention.wq', 'layers.3', 'norm', 'loss'. */
function moduleFqn(node: GraphNode): string {
  const fqn = node.params?.[0];
  const paramModule = fqn?.includes('.') ? fqn.slice(0, fqn.lastIndexOf('.')) : undefined;
  if (node.layer === undefined) return paramModule ?? node.name.split('.')[0];
  const block = `layers.${node.layer}`;
  return paramModule?.startsWith(`${block}.`) ? paramModule : block;
}

/** A region of the step graph as torch's pass sees one FX graph (region numbers are local). */
export function manualGraphOf(ix: GraphIndex, region: ManualRegion): ManualGraph {
  const nodes = region.nodes;
  const local = new Int32Array(ix.n).fill(-1);
  nodes.forEach((i, k) => (local[i] = k));
  const localOf = (i: number) => (i >= 0 ? local[i] : -1);
  const ns = nodes.map((i) => ix.nodes[i]);
  const inputs = nodes.map((i) => {
    const out: number[] = [];
    for (let j = ix.inputOff[i]; j < ix.inputOff[i + 1]; j++) {
      const k = localOf(ix.inputSrc[j]);
      if (k >= 0 && !out.includes(k)) out.push(k);
    }
    return out;
  });
  const waitOf = Int32Array.from(nodes, (i) => (ix.waitOfColl[i] >= 0 ? localOf(ix.waitOfColl[i]) : -1));
  const kind = ns.map((n, k) => (waitOf[k] >= 0 ? n.collective!.kind : undefined));
  return {
    n: nodes.length,
    names: ns.map((n) => n.name),
    inputs,
    waitOf,
    kind,
    bucketKey: ns.map((n, k) => (kind[k] ? `${kind[k]}|${bucketKey(n)}` : undefined)),
    candidate: Uint8Array.from(ns, (n, k) => Number(kind[k] === 'all_reduce' || (kind[k] && n.params !== undefined))),
    placeholder: new Uint8Array(nodes.length),
    output: new Uint8Array(nodes.length),
    compute: Uint8Array.from(nodes, (i) => ix.isCompute[i]),
    foldedCast: Int32Array.from(nodes, (i, k) => (kind[k] === 'all_gather' ? localOf(foldedCastOf(ix, i)) : -1)),
    module: ns.map(moduleFqn),
    backward: Uint8Array.from(ns, (n) => Number(n.phase === 'backward')),
  };
}

/** The cast an all-gather reads when nothing else reads it (torch folds it into the bucket), else -1. */
function foldedCastOf(ix: GraphIndex, i: number): number {
  const src = ix.inputSrc[ix.inputOff[i]];
  if (src < 0 || ix.nodes[src].kind !== 'cast') return -1;
  return ix.succOff[src + 1] - ix.succOff[src] === 1 ? src : -1;
}

// torchtitan Llama3's registration order inside a block (models/llama3/model.py TransformerBlock:
// attention, feed_forward, attention_norm, ffn_norm), and the model's (tok_embeddings, layers,
// norm, output): the order FSDP2 packs a module's parameters in
const TOP_ORDER = ['tok_embeddings', 'layers', 'norm', 'output', 'lm_head'];
const BLOCK_ORDER = ['attention', 'feed_forward', 'attention_norm', 'ffn_norm'];

function registrationKey(fqn: string): number[] {
  const parts = fqn.split('.');
  const top = TOP_ORDER.indexOf(parts[0]);
  const layer = parts[0] === 'layers' ? Number(parts[1]) : 0;
  const sub = parts[0] === 'layers' ? BLOCK_ORDER.indexOf(parts[2]) : 0;
  return [top < 0 ? TOP_ORDER.length : top, Number.isFinite(layer) ? layer : 0, sub < 0 ? BLOCK_ORDER.length : sub];
}

/** torchtitan's get_fsdp_param_module_order over the parameters in registration order. */
export function fsdpParamModuleOrder(params: readonly ParamInfo[]): Map<string, number> {
  const keyed = params.map((p, k) => ({ name: p.name, key: [...registrationKey(p.name), k] }));
  keyed.sort((a, b) => {
    for (let j = 0; j < a.key.length; j++) if (a.key[j] !== b.key[j]) return a.key[j] - b.key[j];
    return 0;
  });
  const order = new Map<string, number>();
  for (const { name } of keyed) {
    if (!name.includes('.')) continue;
    const module = name.slice(0, name.lastIndexOf('.'));
    if (!order.has(module)) order.set(module, order.size);
  }
  return order;
}

/** The number of transformer blocks the step graph has (its nodes' layers). */
export function blockCount(graph: StepGraph): number {
  return graph.nodes.reduce((m, n) => Math.max(m, (n.layer ?? -1) + 1), 0);
}
