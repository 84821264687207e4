// What a hardware and a network preset assume, one row per constant with the public measurement it
// comes from: the explain panel's "What the preset assumes" reads these rows.
// The constants themselves live in hardware.ts and network.ts (their headers say more); this file
// only names them and their sources, so a preset and its citation are read from one place.

import {
  HARDWARE_PRESETS,
  hostLinkBytesPerS,
  kernelLaunchUs,
  type HardwareName,
  type HardwarePreset,
} from './hardware';
import type { NetworkPreset } from './network';
import { formatPercent, gibText, fixed } from '../util';

export interface Assumption {
  /** Stable id for tests and the DOM ('gemm', 'nvlink-bw', ...). */
  readonly key: string;
  readonly label: string;
  readonly value: string;
  readonly source: string;
}

const TFLOPS = 1e12;

const SRC = {
  mamf: 'MAMF table (max achievable matmul FLOPS, torch.matmul bf16), stas00/ml-engineering compute/accelerator',
  tiles: 'NVIDIA Deep Learning Performance guide, "Matrix Multiplication Background": tile and wave quantization',
  grouped: 'ByteDance-Seed/VeOmni PR #460: torch._grouped_mm MoE forwards on H100 (242 and 181 TFLOP/s at hidden 2048)',
  groupedFallback: 'torch 2.15 at::native::_grouped_mm_fallback below SM90: one mm per group',
  flash: 'FlashAttention-2 (Dao 2023, arXiv 2307.08691) and FlashAttention-3 (arXiv 2407.08608) FA2 baselines',
  hbm: 'aten vectorized elementwise kernels ≈ 80 % of HBM peak (nvbandwidth / BabelStream: a copy reaches ~90 %)',
  launch: 'eager PyTorch: dispatcher + cudaLaunchKernel ≈ 4 µs per aten kernel',
  graphLaunch:
    'CUDA.jl docs, "Graphs": 80 kernels 260 µs one by one, 70 µs as one CUDA graph (0.875 µs each); ' +
    'NVIDIA CUDA programming guide §4.2: launch set-up paid once, at instantiation',
  capacity: 'torch.cuda total_memory as torchtitan logs it ("CUDA capacity: …"; PR #165, PR #1881)',
  ncclIntra: 'nccl-tests all_gather_perf / reduce_scatter_perf on 8×H100 NVLink 4 (doc/PERFORMANCE.md busbw)',
  ncclInter: 'torchtitan benchmarks/llama3_h100_202412_torchtitan.md: 400 Gb/s RDMA per GPU; nccl-tests ≈ 90 % of it',
  torchNccl: 'torch._inductor comm_analysis.estimate_nccl_collective_runtime (NCCL tuning.cc, ring LL, 2 channels)',
  eagerAttention: 'torchtitan models/llama3/model/model.py, Attention.forward (apply_rotary_emb, repeat_kv, transpose)',
  hostLink: 'NVIDIA H100 and H200 datasheets: "PCIe Gen5: 128GB/s" (both directions); A100: "PCIe Gen4: 64GB/s"',
} as const;

/** Where each preset's peaks come from (datasheets; the 96 GB H100 interpolated at its power limit). */
const PEAK_SOURCE: Readonly<Record<HardwareName, string>> = {
  h100: 'NVIDIA H100 Tensor Core GPU datasheet, SXM5 (dense, no sparsity)',
  'h100-96gb':
    'torchtitan benchmarks/llama3_h100_202412_torchtitan.md (96 GB HBM2e, 2.4 TB/s, 500 W): ' +
    'linear in power between the H100 NVL (400 W) and SXM5 (700 W) datasheets',
  h200: 'NVIDIA H200 datasheet, SXM (GH100 compute, HBM3e)',
  a100: 'NVIDIA A100 datasheet, SXM4 80 GB',
};

const tflops = (flops: number) => `${Math.round(flops / TFLOPS)} TFLOPS`;
const ofPeak = (f: number, peak: number) => `${tflops(f * peak)} (${formatPercent(f * 100, 0)} of peak)`;

function peakSource(hw: HardwarePreset): string {
  const name = hw.name as HardwareName;
  return Object.hasOwn(PEAK_SOURCE, name) && HARDWARE_PRESETS[name] === hw ? PEAK_SOURCE[name] : 'custom preset';
}

const row = (key: string, label: string, value: string, source: string): Assumption => ({
  key,
  label,
  value,
  source,
});

/** The eager kernels attention nodes pay for (compute.ts attentionCompanions), on every preset. */
const EAGER_ATTENTION = row(
  'attn-eager',
  'kernels around attention',
  'RoPE on q and k, repeat_kv, the output copy: ' +
    'memory-bound, a launch each; again in the backward, twice under selective AC',
  SRC.eagerAttention,
);

/** The MoE experts' grouped GEMMs: torch._grouped_mm's measured rate, or one mm per expert. */
function groupedGemmRow(groupedGemm: number | undefined, peak: number): Assumption {
  if (groupedGemm === undefined)
    return row(
      'gemm-grouped',
      'grouped GEMMs (MoE experts)',
      'one GEMM and one launch per expert',
      SRC.groupedFallback,
    );
  return row(
    'gemm-grouped',
    'grouped GEMMs (MoE experts)',
    `${ofPeak(groupedGemm, peak)} × the tile factor`,
    SRC.grouped,
  );
}

/** One row per hardware constant the cost model uses, with its source. */
export function hardwareAssumptions(hw: HardwarePreset): Assumption[] {
  const peaks = peakSource(hw);
  const hbmGiB = `${gibText(hw.hbmBytes)} (${hw.hbmDatasheetGB} GB)`;
  const rows = [
    row('bf16-peak', 'bf16 tensor-core peak', tflops(hw.bf16Flops), peaks),
    row('fp32-peak', 'fp32 peak (CUDA cores)', tflops(hw.fp32Flops), peaks),
    row('hbm-bw', 'HBM bandwidth', `${fixed(hw.hbmBytesPerS / 1e12, 2)} TB/s`, peaks),
    row('hbm', 'HBM capacity', hbmGiB, peaks === 'custom preset' ? peaks : SRC.capacity),
    row(
      'host-link',
      'host link (CPU offload copies)',
      `${hostLinkBytesPerS(hw) / 1e9} GB/s each way`,
      hw.hostLinkBytesPerS === undefined ? 'custom preset: PCIe Gen5 x16 assumed' : SRC.hostLink,
    ),
  ];
  const a = hw.achieved;
  if (a === undefined) {
    return [...rows, row('achieved', 'achieved rates', 'none: the roofline at the peaks', peaks), EAGER_ATTENTION];
  }
  const memoryBound = `${fixed((a.hbm * hw.hbmBytesPerS) / 1e12, 2)} TB/s (${formatPercent(a.hbm * 100, 0)} of HBM)`;
  return [
    ...rows,
    row('gemm', 'large GEMMs', ofPeak(a.gemm, hw.bf16Flops), SRC.mamf),
    row('gemm-small', 'small GEMMs', `half the large rate at min(M, N, K) = ${a.gemmHalfDim}`, SRC.tiles),
    groupedGemmRow(a.groupedGemm, hw.bf16Flops),
    row('attn-fwd', 'flash attention forward', ofPeak(a.attentionFwd, hw.bf16Flops), SRC.flash),
    row('attn-bwd', 'flash attention backward', ofPeak(a.attentionBwd, hw.bf16Flops), SRC.flash),
    row('memory-bound', 'memory-bound kernels', memoryBound, SRC.hbm),
    row('launch', 'kernel launch', `${hw.launchUs} µs`, SRC.launch),
    row('graph-launch', 'kernel launch in a CUDA graph', `${kernelLaunchUs(hw, true)} µs`, SRC.graphLaunch),
    EAGER_ATTENTION,
  ];
}

const gbps = (bytesPerS: number) => `${Math.round(bytesPerS / 1e9)} GB/s`;
/** The message size at which a preset's achieved bus bandwidth is half its β, if it gives one. */
const halfAt = (bytes: number | undefined) => (bytes === undefined ? '' : `, half at ${Math.round(bytes / 1e6)} MB`);

/** One row per network constant the collective model uses, with its source (`overridden`: the config's). */
export function networkAssumptions(net: NetworkPreset, overridden = false): Assumption[] {
  const nodes = row(
    'gpus-per-node',
    'GPUs per node',
    String(net.gpusPerNode),
    'parallelism.gpus_per_node (a group spanning nodes runs on the inter-node link)',
  );
  if (net.kind === 'nccl-analytical') {
    return [
      nodes,
      row('intra-bw', 'intra-node bw per channel', `${net.intraNodeBwGBs} GB/s`, SRC.torchNccl),
      row('inter-bw', 'inter-node bw per channel', `${net.interNodeBwGBs} GB/s`, SRC.torchNccl),
    ];
  }
  const cited = net.name === 'nvlink-ib' && !overridden;
  const intra = cited ? SRC.ncclIntra : overridden ? 'your override (bandwidthGBps / latencyUs)' : 'illustrative';
  const inter = cited ? SRC.ncclInter : intra;
  return [
    nodes,
    row('intra-bw', 'in-node bus bandwidth', gbps(net.betaIntraBytesPerS) + halfAt(net.halfBwIntraBytes), intra),
    row('intra-alpha', 'in-node ring step', `${net.alphaIntraUs} µs`, intra),
    row('inter-bw', 'cross-node bus bw per GPU', gbps(net.betaInterBytesPerS) + halfAt(net.halfBwInterBytes), inter),
    row('inter-alpha', 'cross-node ring step', `${net.alphaInterUs} µs`, inter),
  ];
}
