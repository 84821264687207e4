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

import type { ParamSpec } from '../model/param_table';
import type { Emitter } from './emitter';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes, numel } from './flops';
import { paramTensorIds } from './ops';
import type { DType, ParamInfo } from './types';

export const DP_GROUP = 'dp';
/** Master weights and optimizer state stay fp32 (mixed precision keeps an fp32 copy). */
export const MASTER_DTYPE: DType = 'fp32';

export interface ShardedParam {
  readonly spec: ParamSpec;
  readonly info: ParamInfo;
  readonly rows: number; // shape[0]
  readonly rest: readonly number[]; // shape[1..]
  readonly shardRows: number;
  readonly paddedRows: number; // shardRows · n
}

export function shardParam(spec: ParamSpec, n: number): ShardedParam {
  const rows = spec.shape[0];
  const shardRows = Math.ceil(rows / n);
  return {
    spec,
    rows,
    rest: spec.shape.slice(1),
    shardRows,
    paddedRows: shardRows * n,
    info: { name: spec.name, shape: [...spec.shape], numel: spec.numel, shardRows, ...(spec.layer === undefined ? {} : { layer: spec.layer }) },
  };
}

export interface FsdpCtx {
  readonly e: Emitter;
  readonly n: number;
  readonly paramDtype: DType;
  readonly reduceDtype: DType;
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
  const { e, n, paramDtype } = c;
  const fqn = p.spec.name;
  const shard = paramTensorIds(fqn).shard;
  const shardShape = [p.shardRows, ...p.rest];
  const shardNumel = numel(shardShape);
  const castName = `${fqn}.${tag}cast`;
  const castOut = e.tensor(castName, shardShape, paramDtype);
  e.node({
    name: castName, kind: 'cast', op: 'cast', inputs: [shard], outputs: [castOut], params: [fqn],
    flops: EW.cast * shardNumel, bytesMoved: ioBytes(e.tensors, [shard, castOut]),
    attrs: { from: MASTER_DTYPE, to: paramDtype, n: shardNumel },
  });
  const agName = `${fqn}.${tag}all_gather`;
  const agOut = e.tensor(agName, [p.paddedRows, ...p.rest], paramDtype);
  e.node({
    name: agName, kind: 'all_gather', op: 'all_gather_into_tensor', inputs: [castOut], outputs: [agOut], params: [fqn],
    collective: {
      kind: 'all_gather', group: DP_GROUP, groupSize: n, dtype: paramDtype,
      inputBytes: e.tensors[castOut].bytes, outputBytes: e.tensors[agOut].bytes,
    },
    attrs: { rows: p.rows, shardRows: p.shardRows, paddedRows: p.paddedRows },
  });
  const waitName = `${fqn}.${tag}wait`;
  const full = e.tensor(`${fqn}.${tag}full`, [p.paddedRows, ...p.rest], paramDtype, { aliasOf: agOut });
  e.node({ name: waitName, kind: 'wait', op: 'wait_tensor', inputs: [agOut], outputs: [full], params: [fqn], waitOf: agName });
  return full;
}

/** The id a parameter's full gradient must be written to (in param dtype, unpadded shape). */
export const gradId = (fqn: string): string => `${fqn}.grad`;

/** grad → cast(reduce dtype, pad) → reduce_scatter(avg) → wait, writing paramTensorIds().gradShard. */
export function emitReduceScatter(c: FsdpCtx, p: ShardedParam): string {
  const { e, n, reduceDtype } = c;
  const fqn = p.spec.name;
  const grad = gradId(fqn);
  const castName = `${fqn}.grad.cast`;
  const padRows = p.paddedRows - p.rows;
  const castOut = e.tensor(castName, [p.paddedRows, ...p.rest], reduceDtype);
  e.node({
    name: castName, kind: 'cast', op: 'cast', inputs: [grad], outputs: [castOut], params: [fqn],
    flops: EW.cast * p.spec.numel, bytesMoved: ioBytes(e.tensors, [grad, castOut]),
    attrs: { from: e.tensors[grad].dtype, to: reduceDtype, n: p.spec.numel, ...(padRows > 0 ? { padRows } : {}) },
  });
  const rsName = `${fqn}.reduce_scatter`;
  const rsOut = e.tensor(rsName, [p.shardRows, ...p.rest], reduceDtype);
  e.node({
    name: rsName, kind: 'reduce_scatter', op: 'reduce_scatter_tensor', inputs: [castOut], outputs: [rsOut], params: [fqn],
    collective: {
      kind: 'reduce_scatter', group: DP_GROUP, groupSize: n, dtype: reduceDtype, reduceOp: 'avg',
      inputBytes: e.tensors[castOut].bytes, outputBytes: e.tensors[rsOut].bytes,
    },
    attrs: { rows: p.rows, shardRows: p.shardRows, paddedRows: p.paddedRows },
  });
  const gradShard = e.tensor(paramTensorIds(fqn).gradShard, [p.shardRows, ...p.rest], reduceDtype, { aliasOf: rsOut });
  e.node({ name: `${fqn}.reduce_scatter.wait`, kind: 'wait', op: 'wait_tensor', inputs: [rsOut], outputs: [gradShard], params: [fqn], waitOf: rsName });
  return gradShard;
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
    name: `${p.spec.name}.adamw`, kind: 'compute', op: 'adamw', inputs, outputs, params: [p.spec.name],
    flops: EW.adamw * n, bytesMoved: ioBytes(e.tensors, [...inputs, ...outputs]),
    attrs: { n, lr: h.lr, beta1: h.beta1, beta2: h.beta2, eps: h.eps, weightDecay: h.weightDecay },
  });
}
