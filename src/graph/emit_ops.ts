// Emitters for the compute ops of ops.ts: each makes its output tensors, fills the attrs the
// runtime executes with, and the FLOPs / bytes the roofline needs. One function per op.

import type { Emitter } from './emitter';
import {
  ELEMENTWISE_FLOPS_PER_ELEM as EW,
  attentionBwdFlops,
  attentionFwdFlops,
  ioBytes,
  matmulFlops,
  numel,
} from './flops';
import { DTYPE_BYTES, type DType } from './types';

interface Base {
  readonly name: string;
  readonly params?: readonly string[];
}

/** C[M,N] = op(A)·op(B) (see ops.ts for the storage of transposed operands). Output id = name. */
export function emitMatmul(
  e: Emitter,
  o: Base & { a: string; b: string; M: number; N: number; K: number; transA?: boolean; transB?: boolean; dtype: DType },
): string {
  const out = e.tensor(o.name, [o.M, o.N], o.dtype);
  const inputs = [o.a, o.b];
  // B may be a padded gathered weight: only its first rows are read, so count the logical K·N.
  const bytes = e.tensors[o.a].bytes + tensorElems(o.K * o.N, e.tensors[o.b].dtype) + e.tensors[out].bytes;
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'matmul',
    inputs,
    outputs: [out],
    flops: matmulFlops(o.M, o.N, o.K),
    bytesMoved: bytes,
    params: o.params,
    attrs: { M: o.M, N: o.N, K: o.K, transA: !!o.transA, transB: !!o.transB },
  });
  return out;
}

const tensorElems = (n: number, dtype: DType): number => n * DTYPE_BYTES[dtype];

/** y = rms_norm(x)·w → [y, rstd]. */
export function emitRmsNorm(
  e: Emitter,
  o: Base & {
    x: string;
    w: string;
    rows: number;
    cols: number;
    eps: number;
    dtype: DType;
  },
): [string, string] {
  const y = e.tensor(o.name, [o.rows, o.cols], o.dtype);
  const rstd = e.tensor(`${o.name}.rstd`, [o.rows], 'fp32');
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'rms_norm',
    inputs: [o.x, o.w],
    outputs: [y, rstd],
    flops: EW.rms_norm * o.rows * o.cols,
    bytesMoved: ioBytes(e.tensors, [o.x, y, rstd]) + tensorElems(o.cols, e.tensors[o.w].dtype),
    params: o.params,
    attrs: { rows: o.rows, cols: o.cols, eps: o.eps },
  });
  return [y, rstd];
}

/** rms_norm backward → [dx, dw]; dw's id is given (the parameter's `.grad`). */
export function emitRmsNormBwd(
  e: Emitter,
  o: Base & { dy: string; x: string; w: string; rstd: string; rows: number; cols: number; dw: string; dtype: DType },
): [string, string] {
  const dx = e.tensor(o.name, [o.rows, o.cols], o.dtype);
  const dw = e.tensor(o.dw, [o.cols], o.dtype);
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'rms_norm_bwd',
    inputs: [o.dy, o.x, o.w, o.rstd],
    outputs: [dx, dw],
    flops: EW.rms_norm_bwd * o.rows * o.cols,
    bytesMoved: ioBytes(e.tensors, [o.dy, o.x, o.rstd, dx, dw]) + tensorElems(o.cols, e.tensors[o.w].dtype),
    params: o.params,
    attrs: { rows: o.rows, cols: o.cols },
  });
  return [dx, dw];
}

export interface AttnShape {
  readonly batch: number;
  readonly seq: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
}

const attnAttrs = (s: AttnShape) => ({
  batch: s.batch,
  seq: s.seq,
  heads: s.heads,
  kvHeads: s.kvHeads,
  headDim: s.headDim,
});

/** Causal attention → [o, lse]. */
export function emitAttention(
  e: Emitter,
  o: Base &
    AttnShape & {
      q: string;
      k: string;
      v: string;
      dtype: DType;
    },
): [string, string] {
  const T = o.batch * o.seq;
  const out = e.tensor(o.name, [T, o.heads * o.headDim], o.dtype);
  const lse = e.tensor(`${o.name}.lse`, [o.batch * o.heads * o.seq], 'fp32');
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'attention',
    inputs: [o.q, o.k, o.v],
    outputs: [out, lse],
    flops: attentionFwdFlops(o.batch, o.heads, o.seq, o.headDim),
    bytesMoved: ioBytes(e.tensors, [o.q, o.k, o.v, out, lse]),
    attrs: attnAttrs(o),
  });
  return [out, lse];
}

/** Attention backward → [dq, dk, dv]. */
export function emitAttentionBwd(
  e: Emitter,
  o: Base &
    AttnShape & {
      dO: string;
      q: string;
      k: string;
      v: string;
      o: string;
      lse: string;
      dtype: DType;
      /** The backward first recomputes the eager kernels before SDPA (selective AC; estimate/compute.ts). */
      recomputesPrologue?: boolean;
    },
): [string, string, string] {
  const T = o.batch * o.seq;
  const dq = e.tensor(`${o.name}.dq`, [T, o.heads * o.headDim], o.dtype);
  const dk = e.tensor(`${o.name}.dk`, [T, o.kvHeads * o.headDim], o.dtype);
  const dv = e.tensor(`${o.name}.dv`, [T, o.kvHeads * o.headDim], o.dtype);
  const inputs = [o.dO, o.q, o.k, o.v, o.o, o.lse];
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'attention_bwd',
    inputs,
    outputs: [dq, dk, dv],
    flops: attentionBwdFlops(o.batch, o.heads, o.seq, o.headDim),
    bytesMoved: ioBytes(e.tensors, [...inputs, dq, dk, dv]),
    attrs: o.recomputesPrologue ? { ...attnAttrs(o), recomputesPrologue: true } : attnAttrs(o),
  });
  return [dq, dk, dv];
}

/** c = a + b (same shape as a). */
export function emitAdd(e: Emitter, o: Base & { a: string; b: string; out?: string }): string {
  const t = e.tensors[o.a];
  const c = e.tensor(o.out ?? o.name, t.shape, t.dtype);
  const n = numel(t.shape);
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'add',
    inputs: [o.a, o.b],
    outputs: [c],
    flops: EW.add * n,
    bytesMoved: ioBytes(e.tensors, [o.a, o.b, c]),
    attrs: { n },
  });
  return c;
}

/** y = x in a new buffer: a layout copy (no flops; reads and writes x once). */
export function emitCopy(e: Emitter, o: Base & { x: string }): string {
  const t = e.tensors[o.x];
  const y = e.tensor(o.name, t.shape, t.dtype);
  const bytesMoved = ioBytes(e.tensors, [o.x, y]);
  const attrs = { n: numel(t.shape) };
  e.node({ name: o.name, kind: 'compute', op: 'copy', inputs: [o.x], outputs: [y], flops: 0, bytesMoved, attrs });
  return y;
}

/** g = silu(a)·b. */
export function emitSwiglu(e: Emitter, o: Base & { a: string; b: string }): string {
  const t = e.tensors[o.a];
  const g = e.tensor(o.name, t.shape, t.dtype);
  const n = numel(t.shape);
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'swiglu',
    inputs: [o.a, o.b],
    outputs: [g],
    flops: EW.swiglu * n,
    bytesMoved: ioBytes(e.tensors, [o.a, o.b, g]),
    attrs: { n },
  });
  return g;
}

export function emitSwigluBwd(e: Emitter, o: Base & { dg: string; a: string; b: string }): [string, string] {
  const t = e.tensors[o.a];
  const da = e.tensor(`${o.name}.da`, t.shape, t.dtype);
  const db = e.tensor(`${o.name}.db`, t.shape, t.dtype);
  const n = numel(t.shape);
  e.node({
    name: o.name,
    kind: 'compute',
    op: 'swiglu_bwd',
    inputs: [o.dg, o.a, o.b],
    outputs: [da, db],
    flops: EW.swiglu_bwd * n,
    bytesMoved: ioBytes(e.tensors, [o.dg, o.a, o.b, da, db]),
    attrs: { n },
  });
  return [da, db];
}
