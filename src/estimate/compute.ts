// Compute time of one node: a roofline at *achieved* rates per op class (hardware.ts cites them):
//   GEMM       flops / (bf16 peak · gemm · d/(d + gemmHalfDim)), d = the smallest of M, N, K
//   attention  flops / (bf16 peak · attentionFwd | attentionBwd)      (flash attention)
//   the rest   max(flops / fp32 peak, bytes / (HBM · hbm))             (memory-bound kernels)
// each + launch overhead, with `bytes` what the op moves as torchtitan's eager aten kernels run it
// (eagerBytes: SwiGLU's two kernels, the fp32 loss). A preset without `achieved` is the plain
// roofline at the peaks.
// Views, waits and collective issues cost nothing on the compute stream; an imported node that
// carries torch's own estimate (estMs) keeps it (collectives are timed by collectiveUs instead).

import type { DType, GraphNode } from '../graph/types';
import type { AchievedEfficiency, HardwarePreset } from './hardware';

/** Peak FLOP/s for a node: tensor cores at `dtype` for matmul-like ops, fp32 CUDA cores otherwise. */
export function peakFlops(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  if (!node.matmulLike) return hw.fp32Flops;
  return dtype === 'fp32' ? hw.fp32Flops : hw.bf16Flops;
}

/** µs. */
export function rooflineUs(flops: number, bytes: number, peakFlopsPerS: number, hbmBytesPerS: number, launchUs: number): number {
  return Math.max((flops / peakFlopsPerS) * 1e6, (bytes / hbmBytesPerS) * 1e6) + launchUs;
}

/** Smallest of a matmul node's M, N, K (Infinity when the node carries no shape, e.g. imported). */
function minGemmDim(node: GraphNode): number {
  const a = node.attrs;
  const dims = [a?.M, a?.N, a?.K].filter((d): d is number => typeof d === 'number' && d > 0);
  return dims.length === 0 ? Infinity : Math.min(...dims);
}

/** Achieved fraction of the tensor-core peak for a matmul-like node (1 for ops on CUDA cores). */
export function achievedFlopsFraction(a: AchievedEfficiency, node: GraphNode): number {
  if (!node.matmulLike) return 1;
  if (node.op === 'attention') return a.attentionFwd;
  if (node.op === 'attention_bwd') return a.attentionBwd;
  const d = minGemmDim(node);
  return d === Infinity ? a.gemm : (a.gemm * d) / (d + a.gemmHalfDim);
}

/**
 * HBM bytes a node moves as torchtitan runs it in eager aten kernels. The graph's bytesMoved is the
 * op's own inputs and outputs. SwiGLU is two kernels, as torch's own aot_autograd graphs show
 * (test/fixtures/fx/tiny_4layer_*.json, torch 2.11): forward `silu(a)` then `mul(s, b)`, 5
 * tensor passes instead of the fused 3; backward `mul(dg, s)`, `mul(dg, b)`, `silu_backward(ds, a)`,
 * 9 passes instead of 5. (Norms are aten._fused_rms_norm there: no extra traffic.) The loss is
 * wider still: `cross_entropy(pred.float())` upcasts the bf16
 * logits (read 2, write 4 bytes per logit), log_softmax reads them twice (max, sum) and writes its
 * fp32 output (8 + 4), 18 B per logit in all; the backward writes the fp32 gradient of the
 * log-probabilities (4), log_softmax_backward reads it and the saved output and writes the fp32
 * gradient (12), and the cast reads it and writes bf16 (6): 22 B per logit (the same aten ops
 * whose tensors src/sim/hidden_tensors.ts allocates).
 */
export function eagerBytes(node: GraphNode): number {
  const logits = Number(node.attrs?.T ?? 0) * Number(node.attrs?.V ?? 0);
  if (node.op === 'cross_entropy') return Math.max(node.bytesMoved, 18 * logits);
  if (node.op === 'cross_entropy_bwd') return Math.max(node.bytesMoved, 22 * logits);
  if (node.op === 'swiglu') return (node.bytesMoved * 5) / 3;
  if (node.op === 'swiglu_bwd') return (node.bytesMoved * 9) / 5;
  return node.bytesMoved;
}

/** Time of a compute / cast node at the preset's achieved rates, µs (no measured or imported time). */
export function achievedUs(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  const a = hw.achieved;
  const flopsEff = a === undefined ? 1 : achievedFlopsFraction(a, node);
  const hbmEff = a === undefined ? 1 : a.hbm;
  return rooflineUs(node.flops, eagerBytes(node), peakFlops(hw, node, dtype) * flopsEff, hw.hbmBytesPerS * hbmEff, hw.launchUs);
}

export function computeNodeUs(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  switch (node.kind) {
    case 'compute':
    case 'cast':
      if (node.estMs !== undefined) return node.estMs * 1000;
      return achievedUs(hw, node, dtype);
    case 'view':
    case 'wait':
    case 'all_gather':
    case 'reduce_scatter':
    case 'all_reduce':
      return 0;
  }
}
