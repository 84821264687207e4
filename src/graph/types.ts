// Step-graph IR: the SPMD program every rank runs for one training step.
// Follows torchtitan simple_fsdp (arXiv 2411.00284) and the shape of torch FX graphs:
// nodes in program order, explicit tensor inputs/outputs, collectives completed by waits.
// Nodes are immutable; passes (backends) return new graphs.

import type { ComputeOp } from './ops';

/**
 * Element types. Integers are token ids (TOKENS/TARGETS) and imported integer tensors (torch's int64 'i64', its
 * 1-byte bool/int8/uint8 'i8', int16 'i16'); never a param dtype. Complex ('c64', 'c128': RoPE's freqs_cis) only
 * in imported graphs, carried, never computed on.
 */
export type DType = 'fp32' | 'bf16' | 'fp16' | 'i32' | 'i64' | 'i8' | 'i16' | 'c64' | 'c128';

export const DTYPE_BYTES: Readonly<Record<DType, number>> = {
  fp32: 4,
  bf16: 2,
  fp16: 2,
  i32: 4,
  i64: 8,
  i8: 1,
  i16: 2,
  c64: 8,
  c128: 16,
};

/** A tensor value in the graph. Ids are unique; every tensor has exactly one producer (or none: inputs). */
export interface TensorInfo {
  readonly id: string;
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly bytes: number; // numel · DTYPE_BYTES[dtype]
  /** Persistent state that lives across steps (parameter shards, optimizer state, step inputs). */
  readonly persistent?: boolean;
  /** A view of another tensor's storage (e.g. a wait_tensor's result aliases its collective's output). */
  readonly aliasOf?: string;
  /** In pinned host memory, not HBM (graph_trainer's CPU offload, cpu_offload.ts): no device bytes. */
  readonly host?: boolean;
}

export type CollectiveKind = 'all_gather' | 'reduce_scatter' | 'all_reduce' | 'all_to_all';

/** The collective kinds: each is also the NodeKind of the node that issues it. */
export const COLLECTIVE_KINDS: readonly CollectiveKind[] = ['all_gather', 'reduce_scatter', 'all_reduce', 'all_to_all'];

export const isCollectiveKind = (k: string): k is CollectiveKind => (COLLECTIVE_KINDS as readonly string[]).includes(k);

/** A parameter's tensor-parallel placement (torchtitan's Llama plan): Shard(0), Shard(1) or Replicate. */
export type TpPlacement = 'colwise' | 'rowwise' | 'replicate';

export type NodeKind =
  // work on the compute stream
  | 'compute' // a kernel: matmul, attention, norm, elementwise, loss, optimizer
  | 'cast' // dtype conversion (near free; feeds collectives)
  | 'view' // reshape / getitem / alias: no kernel, no bytes
  // communication
  | 'all_gather' // start of an all-gather (issued on the group's comm stream)
  | 'reduce_scatter' // start of a reduce-scatter
  | 'all_reduce' // start of an all-reduce (HSDP gradients on dp_replicate, partial TP gradients on tp)
  | 'all_to_all' // start of an all_to_all_single (MoE token dispatch / combine on ep)
  | 'wait'; // blocks the compute stream until its collective ends

export type Phase = 'forward' | 'backward' | 'optimizer';

/**
 * The bytes a collective's cost is priced on (the CostModel contract): an all-gather's gathered
 * output, a reduce-scatter's / all-reduce's full input, an all-to-all's larger side (the rank
 * that receives more than it sends, under routing imbalance, sets the pace).
 */
export function collectiveCostBytes(c: Pick<CollectiveInfo, 'kind' | 'inputBytes' | 'outputBytes'>): number {
  if (c.kind === 'all_gather') return c.outputBytes;
  return c.kind === 'all_to_all' ? Math.max(c.inputBytes, c.outputBytes) : c.inputBytes;
}

export interface CollectiveInfo {
  readonly kind: CollectiveKind;
  readonly group: string; // process group name, 'dp' for SimpleFSDP
  readonly groupSize: number;
  /** Ranks between consecutive members of the group (mesh.ts: tp 1, dp_shard tp, ...); absent = 1. */
  readonly groupStride?: number;
  readonly dtype: DType;
  readonly inputBytes: number; // per rank: a shard (AG), the full tensor (RS), the rows sent (all-to-all)
  readonly outputBytes: number; // per rank: the full tensor (AG), a shard (RS), the rows received (all-to-all)
  readonly reduceOp?: 'sum' | 'avg';
  /** Original collectives merged into this one by bucketing (names); absent when not a bucket. */
  readonly members?: readonly string[];
}

export interface GraphNode {
  readonly id: number; // position in graph.nodes
  readonly name: string; // unique: 'layers.3.attention.wq.all_gather', 'mm_3', ...
  readonly kind: NodeKind;
  /** The op that made it (micrograd's `_op`): a ComputeOp for compute nodes, else the FX-style target. */
  readonly op: ComputeOp | string;
  readonly inputs: readonly string[]; // tensor ids read
  readonly outputs: readonly string[]; // tensor ids written
  readonly flops: number; // for the roofline
  readonly bytesMoved: number; // memory traffic for the roofline
  /** Matmul-like (mm, bmm, attention fwd/bwd): the nodes the overlap scheduler hides comm behind. */
  readonly matmulLike: boolean;
  readonly phase: Phase;
  readonly layer?: number; // transformer block index; absent for embeddings / final norm / output
  readonly params?: readonly string[]; // parameter FQNs this node concerns
  readonly collective?: CollectiveInfo; // for all_gather / reduce_scatter
  readonly waitOf?: string; // for wait: name of the collective node it completes
  readonly attrs?: Readonly<Record<string, number | string | boolean>>; // op attributes (shapes, eps, ...)
  /** Estimate carried by an imported graph (torch's own, ms); used instead of the cost model when present. */
  readonly estMs?: number;
  /** Imported collectives: torch's estimate at size 0 (its latency, ms) and its memory footprint (bytes). */
  readonly estMsSize0?: number;
  readonly sizeBytes?: number;
}

export interface ParamInfo {
  readonly name: string; // torchtitan FQN: 'layers.0.attention.wq.weight'
  readonly shape: readonly number[]; // full (unsharded) shape
  readonly numel: number;
  readonly shardRows: number; // rows per rank on dim 0 of the local (TP) shard (padded: ceil(rows / n))
  readonly layer?: number;
  /** TP graphs only: the placement across the tp group and the TP-local shape FSDP shards. */
  readonly tp?: TpPlacement;
  readonly localShape?: readonly number[];
}

export interface GraphMeta {
  readonly model: string; // preset name or 'fx-import'
  readonly worldSize: number;
  /** The device mesh (graph/mesh.ts); absent = FSDP on worldSize ranks. */
  readonly mesh?: { readonly dpReplicate: number; readonly dpShard: number; readonly tp: number; readonly ep?: number };
  readonly paramDtype: DType;
  readonly reduceDtype: DType;
  readonly batch: number;
  readonly seqLen: number;
  /**
   * One forward-backward graph (graph_trainer aot_fx_trace): graph passes run once over both
   * phases instead of once per phase; absent = a forward and a backward graph.
   */
  readonly jointGraph?: boolean;
  readonly source?: string;
}

export interface StepGraph {
  readonly nodes: readonly GraphNode[];
  readonly tensors: Readonly<Record<string, TensorInfo>>;
  readonly params: readonly ParamInfo[];
  readonly meta: GraphMeta;
  /** The FX graphs an imported step came from, in order (torch runs its passes on each); absent for built graphs. */
  readonly fxGraphs?: readonly FxGraphBoundary[];
}

/** One imported FX graph: its nodes are those of `phase`; placeholders and outputs as tensor ids, in FX order. */
export interface FxGraphBoundary {
  readonly phase: Phase;
  readonly placeholders: readonly string[];
  readonly outputs: readonly string[];
}
