// Roofline compute time of one node: max(FLOPs / peak(dtype), bytes / HBM bandwidth) + launch.
// Views, waits and collective issues cost nothing on the compute stream; an imported node that
// carries torch's own estimate (estMs) keeps it (collectives are timed by collectiveUs instead).

import type { DType, GraphNode } from '../graph/types';
import type { HardwarePreset } from './hardware';

/** Peak FLOP/s for a node: tensor cores at `dtype` for matmul-like ops, fp32 CUDA cores otherwise. */
export function peakFlops(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  if (!node.matmulLike) return hw.fp32Flops;
  return dtype === 'fp32' ? hw.fp32Flops : hw.bf16Flops;
}

/** µs. */
export function rooflineUs(flops: number, bytes: number, peakFlopsPerS: number, hbmBytesPerS: number, launchUs: number): number {
  return Math.max((flops / peakFlopsPerS) * 1e6, (bytes / hbmBytesPerS) * 1e6) + launchUs;
}

export function computeNodeUs(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  switch (node.kind) {
    case 'compute':
    case 'cast':
      if (node.estMs !== undefined) return node.estMs * 1000;
      return rooflineUs(node.flops, node.bytesMoved, peakFlops(hw, node, dtype), hw.hbmBytesPerS, hw.launchUs);
    case 'view':
    case 'wait':
    case 'all_gather':
    case 'reduce_scatter':
      return 0;
  }
}
