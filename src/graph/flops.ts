// FLOP and byte formulas for the roofline, from shapes alone.
// Matmuls are 2·M·N·K; attention follows FlashAttention's count (4·B·H·S²·hd forward, causal
// halves it; backward ≈ 2.5× forward: 5 matmuls instead of 2, plus recompute of P).
// Norms, elementwise ops and the loss are bytes-bound: their FLOPs are small per-element counts.

import { DTYPE_BYTES, type DType, type TensorInfo } from './types';

export const numel = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);
export const tensorBytes = (shape: readonly number[], dtype: DType): number => numel(shape) * DTYPE_BYTES[dtype];

/** C[M,N] = A[M,K]·B[K,N]: one multiply and one add per MAC. */
export const matmulFlops = (M: number, N: number, K: number): number => 2 * M * N * K;

/** Self-attention forward: QKᵀ and PV, each 2·S·S·hd per head; causal masks half. */
export function attentionFwdFlops(batch: number, heads: number, seq: number, headDim: number, causal = true): number {
  return (4 * batch * heads * seq * seq * headDim) / (causal ? 2 : 1);
}

/** Attention backward ≈ 2.5 × forward (FlashAttention-2's accounting). */
export const ATTENTION_BWD_FACTOR = 2.5;
export const attentionBwdFlops = (batch: number, heads: number, seq: number, headDim: number, causal = true): number =>
  ATTENTION_BWD_FACTOR * attentionFwdFlops(batch, heads, seq, headDim, causal);

/** Per-element FLOP counts of the bytes-bound ops (rough; only matters when bandwidth is huge). */
export const ELEMENTWISE_FLOPS_PER_ELEM = {
  add: 1,
  swiglu: 5, // sigmoid (≈3), two multiplies
  swiglu_bwd: 10,
  rms_norm: 4, // square, sum, scale, weight
  rms_norm_bwd: 8,
  cross_entropy: 5, // max, sub, exp, sum, log
  cross_entropy_bwd: 4,
  embedding_bwd: 1,
  adamw: 12,
  cast: 1,
  router_topk: 8, // per [T, E] score: exp, sum, scale, and a top-k pass
} as const;

/** Bytes read + written by a node: the sum of its tensors' sizes. */
export function ioBytes(tensors: Readonly<Record<string, TensorInfo>>, ids: readonly string[]): number {
  let s = 0;
  for (const id of ids) s += tensors[id]?.bytes ?? 0;
  return s;
}
