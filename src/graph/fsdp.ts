// SimpleFSDP's per-parameter communication, after torchtitan experiments/simple_fsdp
// (arXiv 2411.00284): before a use, `cast (shard → param dtype) → all_gather → wait`; after a
// gradient is made, `cast (→ reduce dtype) → reduce_scatter(avg) → wait`; then AdamW on the shard.
//
// Sharding is on dim 0 with shardRows = ceil(rows / n) (torch's FSDP2 / DTensor Shard(0) padding):
//   - the shard is stored padded: [shardRows, ...rest], fp32 master weights; rank r holds rows
//     [r·shardRows, (r+1)·shardRows), rows past `rows` are zero;
//   - the all-gathered tensor has paddedRows = shardRows·n rows; every consumer reads only its
//     first `rows` rows, a row-major prefix, so padding needs no extra op in forward;
//   - the gradient cast before the reduce-scatter appends zero rows: attrs.padRows =
//     paddedRows − rows (the attr is present only when it is > 0; tiny/small never pad on 1..8 ranks).
// On a mesh (mesh.ts) the parameter is first split by its TP placement (tpPlacement: torchtitan's
// Llama plan, and DeepSeek-V3's for MLA), and FSDP shards that local TP shard on dim 0 across
// dp_shard; with HSDP the reduce-scattered gradient shard is then all-reduced (avg) across
// dp_replicate. A routed expert's weights [E, ...] are first split across ep (each rank keeps
// E / ep experts) and FSDP-shard over efsdp, their own group (mesh.ts); without expert parallel
// TP splits them on F instead and they FSDP-shard with the dense weights (expertTpPlacement).

import type { ParamSpec } from '../model';
import type { Emitter } from './emitter';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes, numel } from './flops';
import { paramTensorIds } from './ops';
import { fsdpMesh, meshGroup, type Mesh, type MeshDim } from './mesh';
import type { CollectiveInfo, CollectiveKind, DType, ParamInfo, TpPlacement } from './types';

/** Master weights and optimizer state stay fp32 (mixed precision keeps an fp32 copy). */
const MASTER_DTYPE: DType = 'fp32';

export interface ShardedParam {
  readonly spec: ParamSpec;
  readonly info: ParamInfo;
  readonly rows: number; // local (TP) shape[0]
  readonly rest: readonly number[]; // local (TP) shape[1..]
  readonly shardRows: number;
  readonly paddedRows: number; // shardRows · n
  readonly numel: number; // local (TP / EP) numel
  /** The mesh dimension whose group FSDP-shards it: 'dp_shard', or 'efsdp' for a routed expert. */
  readonly fsdpDim: 'dp_shard' | 'efsdp';
}

/**
 * torchtitan's Llama TP plan (parallelize_llama / apply_tp): wq, wk, wv, w1, w3 and `output`
 * ColwiseParallel (weight Shard(0)), wo and w2 RowwiseParallel (weight Shard(1)), tok_embeddings
 * RowwiseParallel on an embedding (weight Shard(0): the vocabulary), norms Replicate.
 * DeepSeek-V3 (torchtitan/models/deepseek_v3/sharding.py _set_deepseek_v3_layer_sharding, b5bcd76):
 * MLA's up-projections wq_b and wkv_b colwise; the low-rank wq_a, wkv_a, q_norm, kv_norm and the
 * router gate Replicate; the shared experts' w1/w3/w2 as a dense FFN's.
 */
export function tpPlacement(fqn: string): TpPlacement {
  if (/\.(wo|w2)\.weight$/.test(fqn)) return 'rowwise';
  if (/\.(wq|wk|wv|w1|w3|wq_b|wkv_b)\.weight$/.test(fqn) || fqn === 'output.weight' || fqn === 'tok_embeddings.weight')
    return 'colwise';
  return 'replicate';
}

/**
 * A routed expert's TP placement without expert parallel (moe_sharding.py
 * expert_param_placement_dense, the layout deepseek_v3/sharding.py passes): w1_EFD and w3_EFD
 * Shard(1) (colwise on F), w2_EDF Shard(2) (rowwise on F).
 */
const expertTpPlacement = (fqn: string): TpPlacement => (fqn.endsWith('w2_EDF') ? 'rowwise' : 'colwise');

/** The TP-local shape: the output dim (colwise) or the input dim (rowwise) divided by tp; `lead` dims before them. */
function tpLocalShape(shape: readonly number[], placement: TpPlacement, tp: number, lead = 0): number[] {
  if (tp === 1 || placement === 'replicate') return [...shape];
  const d = lead + (placement === 'colwise' ? 0 : 1);
  return shape.map((x, i) => (i === d ? x / tp : x));
}

/** A parameter's TP placement and local shape: a routed expert is split on E by ep, or (ep = 1) on F by tp. */
function localPlacement(spec: ParamSpec, tp: number, ep: number): { placement: TpPlacement; local: number[] } {
  if (!spec.expert) {
    const placement = tpPlacement(spec.name);
    return { placement, local: tpLocalShape(spec.shape, placement, tp) };
  }
  if (ep > 1) return { placement: 'replicate', local: spec.shape.map((x, i) => (i === 0 ? x / ep : x)) };
  const placement = expertTpPlacement(spec.name);
  return { placement, local: tpLocalShape(spec.shape, placement, tp, 1) };
}

/**
 * n: the FSDP degree of the parameter's group (dp_shard, or efsdp for a routed expert under expert
 * parallel: mesh.ts expertFsdpDegree); tp, ep: the degrees (the builder has checked they divide the
 * split dims). Under ep > 1 a routed expert is split on dim 0 by ep and not by tp.
 */
export function shardParam(spec: ParamSpec, n: number, tp = 1, ep = 1): ShardedParam {
  const { placement, local } = localPlacement(spec, tp, ep);
  const rows = local[0];
  const shardRows = Math.ceil(rows / n);
  // placement and local shape only on TP graphs, so a 1-D graph's JSON is what it always was
  const tpInfo = tp > 1 && placement !== 'replicate' ? { tp: placement, localShape: local } : {};
  return {
    spec,
    rows,
    rest: local.slice(1),
    shardRows,
    paddedRows: shardRows * n,
    numel: numel(local),
    fsdpDim: spec.expert ? 'efsdp' : 'dp_shard',
    info: {
      name: spec.name,
      shape: [...spec.shape],
      numel: spec.numel,
      shardRows,
      ...(spec.layer === undefined ? {} : { layer: spec.layer }),
      ...tpInfo,
    },
  };
}

export interface FsdpCtx {
  readonly e: Emitter;
  /** The dp_shard degree (the FSDP group size). */
  readonly n: number;
  readonly paramDtype: DType;
  readonly reduceDtype: DType;
  /** The device mesh; absent = FSDP on n ranks. */
  readonly mesh?: Mesh;
  /** Copy each sequence-parallel all-gather's output (torch before PR #169404; tp.ts). */
  readonly seqParallelGatherCopy?: boolean;
}

/** The collective fields that place it on a mesh dimension's group (stride only when ≠ 1). */
function groupFields(c: FsdpCtx, dim: MeshDim): Pick<CollectiveInfo, 'group' | 'groupSize' | 'groupStride'> {
  const g = meshGroup(c.mesh ?? fsdpMesh(c.n), dim);
  return g.stride === 1
    ? { group: g.group, groupSize: g.size }
    : { group: g.group, groupSize: g.size, groupStride: g.stride };
}

/** torch's functional collective of each kind (_c10d_functional.*). */
const COLLECTIVE_OPS: Readonly<Record<CollectiveKind, string>> = {
  all_gather: 'all_gather_into_tensor',
  reduce_scatter: 'reduce_scatter_tensor',
  all_reduce: 'all_reduce',
  all_to_all: 'all_to_all_single',
};

/**
 * collective → wait of one tensor on a mesh group; returns the wait's output (aliasing the
 * collective's). `out` is the id the wait writes (the tensor consumers read).
 */
export function emitCollective(
  c: FsdpCtx,
  s: {
    name: string;
    kind: CollectiveKind;
    dim: MeshDim;
    input: string;
    outShape: readonly number[];
    dtype: DType;
    out: string;
    reduceOp?: 'sum' | 'avg';
    params?: readonly string[];
  },
): string {
  const { e } = c;
  const op = COLLECTIVE_OPS[s.kind];
  const cOut = e.tensor(s.name, s.outShape, s.dtype);
  e.node({
    name: s.name,
    kind: s.kind,
    op,
    inputs: [s.input],
    outputs: [cOut],
    ...(s.params ? { params: s.params } : {}),
    collective: {
      kind: s.kind,
      ...groupFields(c, s.dim),
      dtype: s.dtype,
      ...(s.reduceOp ? { reduceOp: s.reduceOp } : {}),
      inputBytes: e.tensors[s.input].bytes,
      outputBytes: e.tensors[cOut].bytes,
    },
  });
  const w = e.tensor(s.out, s.outShape, s.dtype, { aliasOf: cOut });
  e.node({
    name: `${s.name}.wait`,
    kind: 'wait',
    op: 'wait_tensor',
    inputs: [cOut],
    outputs: [w],
    ...(s.params ? { params: s.params } : {}),
    waitOf: s.name,
  });
  return w;
}

/** Registers the persistent state of a parameter: its shard and AdamW's exp_avg / exp_avg_sq. */
export function emitParamState(c: FsdpCtx, p: ShardedParam): void {
  const ids = paramTensorIds(p.spec.name);
  const shape = [p.shardRows, ...p.rest];
  c.e.tensor(ids.shard, shape, MASTER_DTYPE, { persistent: true });
  c.e.tensor(ids.m, shape, 'fp32', { persistent: true });
  c.e.tensor(ids.v, shape, 'fp32', { persistent: true });
}

/**
 * cast → all_gather → wait for one parameter; returns the id of the gathered full tensor
 * [paddedRows, ...rest] in param dtype. `tag` is '' in forward and 'bwd.' for the re-gather.
 */
export function emitGather(c: FsdpCtx, p: ShardedParam, tag: '' | 'bwd.'): string {
  const { e, paramDtype } = c;
  const fqn = p.spec.name;
  const shard = paramTensorIds(fqn).shard;
  const shardShape = [p.shardRows, ...p.rest];
  const shardNumel = numel(shardShape);
  const castName = `${fqn}.${tag}cast`;
  const castOut = e.tensor(castName, shardShape, paramDtype);
  e.node({
    name: castName,
    kind: 'cast',
    op: 'cast',
    inputs: [shard],
    outputs: [castOut],
    params: [fqn],
    flops: EW.cast * shardNumel,
    bytesMoved: ioBytes(e.tensors, [shard, castOut]),
    attrs: { from: MASTER_DTYPE, to: paramDtype, n: shardNumel },
  });
  const agName = `${fqn}.${tag}all_gather`;
  const agOut = e.tensor(agName, [p.paddedRows, ...p.rest], paramDtype);
  e.node({
    name: agName,
    kind: 'all_gather',
    op: 'all_gather_into_tensor',
    inputs: [castOut],
    outputs: [agOut],
    params: [fqn],
    collective: {
      kind: 'all_gather',
      ...groupFields(c, p.fsdpDim),
      dtype: paramDtype,
      inputBytes: e.tensors[castOut].bytes,
      outputBytes: e.tensors[agOut].bytes,
    },
    attrs: { rows: p.rows, shardRows: p.shardRows, paddedRows: p.paddedRows },
  });
  const waitName = `${fqn}.${tag}wait`;
  const full = e.tensor(gatheredId(fqn, tag), [p.paddedRows, ...p.rest], paramDtype, { aliasOf: agOut });
  e.node({
    name: waitName,
    kind: 'wait',
    op: 'wait_tensor',
    inputs: [agOut],
    outputs: [full],
    params: [fqn],
    waitOf: agName,
  });
  return full;
}

/** The id of a parameter's gathered full tensor (the all-gather wait's output). */
export const gatheredId = (fqn: string, tag: '' | 'bwd.'): string => `${fqn}.${tag}full`;

/** The id a parameter's full gradient must be written to (in param dtype, unpadded shape). */
export const gradId = (fqn: string): string => `${fqn}.grad`;

/**
 * grad → cast(reduce dtype, pad) → reduce_scatter(avg) → wait, writing paramTensorIds().gradShard;
 * with HSDP the wait's shard is then all-reduced (avg) across dp_replicate into gradShard.
 */
export function emitReduceScatter(c: FsdpCtx, p: ShardedParam): string {
  const { e, reduceDtype } = c;
  const fqn = p.spec.name;
  const grad = gradId(fqn);
  const castName = `${fqn}.grad.cast`;
  const padRows = p.paddedRows - p.rows;
  const castOut = e.tensor(castName, [p.paddedRows, ...p.rest], reduceDtype);
  e.node({
    name: castName,
    kind: 'cast',
    op: 'cast',
    inputs: [grad],
    outputs: [castOut],
    params: [fqn],
    flops: EW.cast * p.numel,
    bytesMoved: ioBytes(e.tensors, [grad, castOut]),
    attrs: { from: e.tensors[grad].dtype, to: reduceDtype, n: p.numel, ...(padRows > 0 ? { padRows } : {}) },
  });
  const rsName = `${fqn}.reduce_scatter`;
  const rsOut = e.tensor(rsName, [p.shardRows, ...p.rest], reduceDtype);
  e.node({
    name: rsName,
    kind: 'reduce_scatter',
    op: 'reduce_scatter_tensor',
    inputs: [castOut],
    outputs: [rsOut],
    params: [fqn],
    collective: {
      kind: 'reduce_scatter',
      ...groupFields(c, p.fsdpDim),
      dtype: reduceDtype,
      reduceOp: 'avg',
      inputBytes: e.tensors[castOut].bytes,
      outputBytes: e.tensors[rsOut].bytes,
    },
    attrs: { rows: p.rows, shardRows: p.shardRows, paddedRows: p.paddedRows },
  });
  const replicas = c.mesh?.dpReplicate ?? 1;
  const shardId = paramTensorIds(fqn).gradShard;
  const rsId = replicas > 1 ? `${fqn}.grad_shard.partial` : shardId;
  const gradShard = e.tensor(rsId, [p.shardRows, ...p.rest], reduceDtype, { aliasOf: rsOut });
  e.node({
    name: `${fqn}.reduce_scatter.wait`,
    kind: 'wait',
    op: 'wait_tensor',
    inputs: [rsOut],
    outputs: [gradShard],
    params: [fqn],
    waitOf: rsName,
  });
  if (replicas === 1) return gradShard;
  return emitCollective(c, {
    name: `${fqn}.all_reduce`,
    kind: 'all_reduce',
    dim: 'dp_replicate',
    input: gradShard,
    outShape: [p.shardRows, ...p.rest],
    dtype: reduceDtype,
    out: shardId,
    reduceOp: 'avg',
    params: [fqn],
  });
}

export interface AdamwHyper {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
}

/** AdamW on the local shard: [p, g, m, v] → [p', m', v']. */
export function emitAdamw(c: FsdpCtx, p: ShardedParam, h: AdamwHyper): void {
  const { e } = c;
  const ids = paramTensorIds(p.spec.name);
  const shape = [p.shardRows, ...p.rest];
  const n = numel(shape);
  e.tensor(ids.shardNext, shape, MASTER_DTYPE);
  e.tensor(ids.mNext, shape, 'fp32');
  e.tensor(ids.vNext, shape, 'fp32');
  const inputs = [ids.shard, ids.gradShard, ids.m, ids.v];
  const outputs = [ids.shardNext, ids.mNext, ids.vNext];
  e.node({
    name: `${p.spec.name}.adamw`,
    kind: 'compute',
    op: 'adamw',
    inputs,
    outputs,
    params: [p.spec.name],
    flops: EW.adamw * n,
    bytesMoved: ioBytes(e.tensors, [...inputs, ...outputs]),
    attrs: { n, lr: h.lr, beta1: h.beta1, beta2: h.beta2, eps: h.eps, weightDecay: h.weightDecay },
  });
}
