// The graph torch's manual overlap scheduler reads (docs/ARCHITECTURE.md §5): one FX graph's
// nodes in program order with what the pass asks of each (is it a placeholder, a compute node by
// torch's is_compute_node, a collective start and its bucket key, an FSDP collective, its module,
// forward or backward). backends/transformer_block.ts builds it from a step graph; the torch
// fixture tests build it from torch's own graphs.

import type { CollectiveKind } from '../../graph';

export interface ManualGraph {
  readonly n: number;
  readonly names: readonly string[];
  /** Each node's distinct input nodes in argument order (FX's `all_input_nodes`). */
  readonly inputs: readonly (readonly number[])[];
  /** A collective start's wait, -1 for other nodes. */
  readonly waitOf: Int32Array;
  /** A start's kind; undefined for other nodes. */
  readonly kind: readonly (CollectiveKind | undefined)[];
  /** torch's get_full_bucket_key for a start (kind, group, dtype, reduce op). */
  readonly bucketKey: readonly (string | undefined)[];
  /** 1: a start the pass may bucket (torch's is_fsdp_all_gather / is_fsdp_reduce_scatter / all-reduce). */
  readonly candidate: Uint8Array;
  /** 1: an FX placeholder (a graph input). */
  readonly placeholder: Uint8Array;
  /** 1: the graph's output node (kept last by torch's stable topological sort). */
  readonly output: Uint8Array;
  /** 1: a compute node (torch's is_compute_node: the op has a FLOP formula). */
  readonly compute: Uint8Array;
  /** An all-gather start's single-user dtype cast that its bucket folds in (-1: none). */
  readonly foldedCast: Int32Array;
  /** The module fqn a node was traced in ('' when none): 'layers.3.attention.wq'. */
  readonly module: readonly string[];
  /** 1: a backward node (joint graphs; torchtitan's `autograd_backward`). */
  readonly backward: Uint8Array;
}

/** One entry of a module bucket plan: a module fqn, or several whose collectives share buckets. */
export type PlanEntry = string | readonly string[];

export type ManualMode = 'jit' | 'joint';

export interface ManualOptions {
  readonly mode: ManualMode;
  readonly plan: readonly PlanEntry[];
  /** joint: FSDP2's module order (first-seen in the parameter registration order), the packing order. */
  readonly paramModuleOrder?: ReadonlyMap<string, number>;
}

/** A bucket torch made: its members (starts, in packing order), kind, plan entry and direction. */
export interface ManualBucket {
  readonly members: readonly number[];
  readonly kind: CollectiveKind;
  readonly entry: number; // index into the plan
  readonly backward: boolean;
  readonly start: number; // item id of the merged start
  readonly wait: number; // item id of the merged wait
}

/** Why a bucket was moved: the overlap dependency torch added (target waits on / follows source). */
export interface OverlapDep {
  readonly target: number; // item id
  readonly sources: readonly number[]; // item ids (bucket starts)
}

export interface ManualResult {
  /** The final program order as item ids: node numbers (< n) and bucket starts / waits (>= n). */
  readonly order: readonly number[];
  readonly buckets: readonly ManualBucket[];
  /** Casts folded into a bucket start: item id of the start → the casts, in member order. */
  readonly foldedCasts: ReadonlyMap<number, readonly number[]>;
  readonly deps: readonly OverlapDep[];
}

/** torchtitan's default module bucket plan (get_default_transformer_block_buckets) for a Llama. */
export function defaultModulePlan(nLayers: number): PlanEntry[] {
  return ['tok_embeddings', ...Array.from({ length: nLayers }, (_, l) => `layers.${l}`), ['norm', 'output']];
}

/** The plan entry as text: 'layers.3', 'norm+output'. */
export function planEntryText(entry: PlanEntry): string {
  return typeof entry === 'string' ? entry : entry.join('+');
}

/**
 * torch's get_subgraph_by_path over its GraphView: the nodes whose module is the path or inside it,
 * in graph order; for a list of paths, each path's nodes in turn. `byPath` is scopeIndex's.
 */
export function scopeNodes(byPath: ReadonlyMap<string, readonly number[]>, entry: PlanEntry): number[] {
  const paths = typeof entry === 'string' ? [entry] : entry;
  return paths.flatMap((p) => byPath.get(p) ?? []);
}

/** torch's make_graph_view: every node listed under each dotted prefix of its module, in graph order. */
export function scopeIndex(g: ManualGraph): Map<string, number[]> {
  const byPath = new Map<string, number[]>();
  for (let i = 0; i < g.n; i++) {
    const m = g.module[i];
    if (m === '') continue;
    for (let end = m.indexOf('.'); ; end = m.indexOf('.', end + 1)) {
      const prefix = end < 0 ? m : m.slice(0, end);
      const list = byPath.get(prefix);
      if (list) list.push(i);
      else byPath.set(prefix, [i]);
      if (end < 0) break;
    }
  }
  return byPath;
}
