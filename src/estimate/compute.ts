// Compute time of one node: a roofline at *achieved* rates per op class (hardware.ts cites them):
//   GEMM       flops / (bf16 peak · gemm · d/(d + gemmHalfDim)), d = the smallest of M, N, K
//   grouped    flops / (bf16 peak · groupedGemm · d/(d + gemmHalfDim)), d per expert (torch._grouped_mm);
//              without groupedGemm, one plain GEMM and one launch per expert (torch's fallback)
//   attention  flops / (bf16 peak · attentionFwd | attentionBwd)      (flash attention)
//   the rest   max(flops / fp32 peak, bytes / (HBM · hbm))             (memory-bound kernels)
// each + launch overhead, with `bytes` what the op moves as torchtitan's eager aten kernels run it
// (eagerBytes: SwiGLU's two kernels, the fp32 loss), and attention pays the eager kernels
// torchtitan runs around SDPA (attentionCompanions). A preset without `achieved` is the plain
// roofline at the peaks.
// Views, waits and collective issues cost nothing on the compute stream; an imported node that
// carries torch's own estimate (estMs) keeps it (collectives are timed by collectiveUs instead).
// Each kernel launch costs the preset's eager launch, or its CUDA-graph replay cost when the step
// runs as one captured graph (hardware.ts kernelLaunchUs; graph_trainer's cudagraph_pass).

import { DTYPE_BYTES, hostTransferOf, type DType, type GraphNode } from '../graph';
import { hostLinkBytesPerS, kernelLaunchUs, type AchievedEfficiency, type HardwarePreset } from './hardware';

/** Peak FLOP/s for a node: tensor cores at `dtype` for matmul-like ops, fp32 CUDA cores otherwise. */
function peakFlops(hw: HardwarePreset, node: GraphNode, dtype: DType): number {
  if (!node.matmulLike) return hw.fp32Flops;
  return dtype === 'fp32' ? hw.fp32Flops : hw.bf16Flops;
}

/** µs. */
export function rooflineUs(
  flops: number,
  bytes: number,
  peakFlopsPerS: number,
  hbmBytesPerS: number,
  launchUs: number,
): number {
  return Math.max((flops / peakFlopsPerS) * 1e6, (bytes / hbmBytesPerS) * 1e6) + launchUs;
}

/** Smallest of a matmul node's M, N, K (Infinity when the node carries no shape, e.g. imported). */
function minGemmDim(node: GraphNode): number {
  const a = node.attrs;
  const dims = [a?.M, a?.N, a?.K].filter((d): d is number => typeof d === 'number' && d > 0);
  return dims.length === 0 ? Infinity : Math.min(...dims);
}

/** Experts a grouped GEMM node runs (1 for any other node). */
function gemmGroups(node: GraphNode): number {
  const g = node.op === 'grouped_mm' ? Number(node.attrs?.groups) : 1;
  return Number.isSafeInteger(g) && g > 1 ? g : 1;
}

/**
 * Smallest dimension of one expert's GEMM in a grouped GEMM: the routed rows split over the experts
 * (M, or K for the weight gradient, which contracts over the rows: attrs.transA).
 */
function minGroupedDim(node: GraphNode): number {
  const rows = Number(node.attrs?.transA === true ? node.attrs?.K : node.attrs?.M);
  const d = minGemmDim(node);
  return rows > 0 && d !== Infinity ? Math.min(d, rows / gemmGroups(node)) : d;
}

/** Achieved fraction of the tensor-core peak for a matmul-like node (1 for ops on CUDA cores). */
function achievedFlopsFraction(a: AchievedEfficiency, node: GraphNode): number {
  if (!node.matmulLike) return 1;
  if (node.op === 'attention') return a.attentionFwd;
  if (node.op === 'attention_bwd') return a.attentionBwd;
  const grouped = node.op === 'grouped_mm';
  const d = grouped ? minGroupedDim(node) : minGemmDim(node);
  const rate = grouped ? (a.groupedGemm ?? a.gemm) : a.gemm;
  return d === Infinity ? rate : (rate * d) / (d + a.gemmHalfDim);
}

/** Launches beyond the first: a grouped GEMM without a grouped kernel runs one mm per expert. */
function extraGemmLaunches(a: AchievedEfficiency | undefined, node: GraphNode): number {
  return a !== undefined && a.groupedGemm === undefined ? gemmGroups(node) - 1 : 0;
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
 * whose tensors src/sim/hidden_tensors.ts allocates). A compiled loss (attrs.compiled) is inductor's
 * fused kernels, which hidden_tensors.ts describes: one read of the logits forward, one read and one
 * write of the logits' size backward, i.e. the node's own inputs and outputs (bytesMoved).
 */
export function eagerBytes(node: GraphNode): number {
  if (node.attrs?.compiled === true) return node.bytesMoved;
  const logits = Number(node.attrs?.T ?? 0) * Number(node.attrs?.V ?? 0);
  if (node.op === 'cross_entropy') return Math.max(node.bytesMoved, 18 * logits);
  if (node.op === 'cross_entropy_bwd') return Math.max(node.bytesMoved, 22 * logits);
  if (node.op === 'swiglu') return (node.bytesMoved * 5) / 3;
  if (node.op === 'swiglu_bwd') return (node.bytesMoved * 9) / 5;
  return node.bytesMoved;
}

export interface EagerKernels {
  readonly bytes: number;
  readonly launches: number;
}

const NO_KERNELS: EagerKernels = { bytes: 0, launches: 0 };

/**
 * The memory-bound aten kernels torchtitan's Llama attention runs around SDPA in eager mode
 * (torchtitan/models/llama3/model/model.py, Attention.forward), which the step graph folds into
 * its attention nodes:
 *  - apply_rotary_emb on q and on k: `x.float()`, the complex multiply by freqs_cis (complex64,
 *    [seq, headDim/2]) and `type_as(x)` back: read e + write 4, read 4 + write 4, read 4 + write e
 *    bytes per element, three kernels (only the multiply when activations are fp32: e = 4);
 *  - repeat_kv of k and of v when heads > kvHeads: expand + reshape copies kv to `heads` heads;
 *  - `output.transpose(1, 2).contiguous()`: one copy of the output.
 * The backward runs their mirrors (cast, multiply by the conjugate, cast; the sum over repeats; the
 * gradient's transpose copy), the same bytes. Under torchtitan's selective op AC the mm outputs are
 * saved but these kernels' outputs are not, so the backward recomputes the forward set first
 * (attention_bwd attrs.recomputesPrologue). Per batch element and local head, as attrs say.
 */
export function attentionCompanions(node: GraphNode, dtype: DType): EagerKernels {
  if (node.op !== 'attention' && node.op !== 'attention_bwd') return NO_KERNELS;
  const a = node.attrs ?? {};
  const [batch, seq, heads, kvHeads, hd] = [a.batch, a.seq, a.heads, a.kvHeads, a.headDim].map(Number);
  if (![batch, seq, heads, kvHeads, hd].every((x) => x > 0)) return NO_KERNELS;
  const e = DTYPE_BYTES[dtype];
  const q = batch * seq * heads * hd;
  const kv = batch * seq * kvHeads * hd;
  const freqs = seq * hd * 4; // complex64 [seq, hd/2]
  const casts = e < 4;
  const rope = (x: number) => x * (8 + (casts ? 2 * (e + 4) : 0)) + freqs;
  const gqa = heads > kvHeads;
  const once: EagerKernels = {
    bytes: rope(q) + rope(kv) + (gqa ? 2 * (kv + q) * e : 0) + 2 * q * e,
    launches: 2 * (casts ? 3 : 1) + (gqa ? 2 : 0) + 1,
  };
  const times = node.op === 'attention_bwd' && a.recomputesPrologue === true ? 2 : 1;
  return { bytes: times * once.bytes, launches: times * once.launches };
}

/** Time of a compute / cast node at the preset's achieved rates, µs (no measured or imported time). */
function achievedUs(hw: HardwarePreset, node: GraphNode, dtype: DType, launchUs: number): number {
  const a = hw.achieved;
  const flopsEff = a === undefined ? 1 : achievedFlopsFraction(a, node);
  const hbm = hw.hbmBytesPerS * (a === undefined ? 1 : a.hbm);
  const own = rooflineUs(node.flops, eagerBytes(node), peakFlops(hw, node, dtype) * flopsEff, hbm, launchUs);
  const extra = attentionCompanions(node, dtype);
  return own + (extra.bytes / hbm) * 1e6 + (extra.launches + extraGemmLaunches(a, node)) * launchUs;
}

/** An ao offload / reload (graph/cpu_offload.ts): its bytes over the host link, one copy launched. */
function hostCopyUs(hw: HardwarePreset, node: GraphNode, cudaGraphs: boolean): number {
  return (node.bytesMoved / hostLinkBytesPerS(hw)) * 1e6 + kernelLaunchUs(hw, cudaGraphs);
}

/**
 * Whether a node's kernels can sit in graph_trainer's captured CUDA graph (torchtitan
 * experiments/graph_trainer/cudagraph.py `is_cudagraphable`, b5bcd76): aten._grouped_mm below
 * compute capability 10.0 ("may perform internal CPU<->CUDA copies") and ops on data-dependent
 * shapes (attrs.dynamicShape: the routed rows an EP all-to-all brings) run eager between the graphs.
 */
function cudagraphable(hw: HardwarePreset, node: GraphNode): boolean {
  if (node.op === 'grouped_mm' && hw.torchGpuType !== 'blackwell') return false;
  return node.attrs?.dynamicShape !== true;
}

/** µs of one node on the compute stream; `cudaGraphs`: the step's kernels replay from captured graphs. */
export function computeNodeUs(hw: HardwarePreset, node: GraphNode, dtype: DType, cudaGraphs = false): number {
  switch (node.kind) {
    case 'compute':
    case 'cast':
      if (node.estMs !== undefined) return node.estMs * 1000;
      if (hostTransferOf(node) !== undefined) return hostCopyUs(hw, node, cudaGraphs);
      return achievedUs(hw, node, dtype, kernelLaunchUs(hw, cudaGraphs && cudagraphable(hw, node)));
    case 'view':
    case 'wait':
    case 'all_gather':
    case 'reduce_scatter':
    case 'all_reduce':
    case 'all_to_all':
      return 0;
  }
}
