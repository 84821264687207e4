// Accelerator presets: dense peaks, HBM bandwidth and capacity, and what kernels *achieve* on them
// per op class (one set of constants per GPU, never per model or per run). Sources:
//  - peaks: NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989 TFLOPS bf16 dense, 67 TFLOPS fp32,
//    3.35 TB/s), NVIDIA H200 datasheet (SXM: same GH100 compute, 4.8 TB/s HBM3e, 141 GB), NVIDIA
//    A100 datasheet (SXM4 80 GB: 312 / 19.5 TFLOPS, 2.039 TB/s). Peaks are dense (no 2:4 sparsity).
//  - large GEMMs: "Maximum Achievable Matmul FLOPS" (MAMF) table, stas00/ml-engineering
//    compute/accelerator/README.md (torch.matmul bf16, best shape found by mamf-finder.py):
//    H100 SXM 792.1 TFLOPS (80.1 %), GH200 (H200-class GH100) 821.0 (83.0 %), A100 SXM 267.9 (85.9 %).
//  - small GEMMs: tile and wave quantization (NVIDIA "Matrix Multiplication Background" user's
//    guide, Deep Learning Performance docs): a GEMM whose smallest dimension is a few 128-wide tiles
//    leaves SMs idle in the last wave; modelled as efficiency × d/(d + GEMM_HALF_DIM) (see gemmEff).
//  - grouped GEMMs (MoE experts, torch._grouped_mm: CUTLASS's SM90 grouped kernel picked by fixed
//    heuristics, pytorch/pytorch#163425): far below a plain GEMM of the same FLOPs. ByteDance-Seed/VeOmni
//    PR #460 times a torch._grouped_mm MoE forward on H100 (32768 tokens, hidden 2048): 10.218 ms for
//    128 experts of 768 top-8, 11.411 ms for 512 experts of 512 top-10 (242 and 181 TFLOP/s). One
//    fraction for both, applied with the tile factor d/(d + gemmHalfDim) at the per-expert d and with
//    the permutes and SwiGLU priced as below: 0.32 of the bf16 peak puts the first 9 % slow and the
//    second 9 % fast (test/unit/estimate/grouped_gemm.test.ts). The same fraction on H200
//    (same GH100). The CUTLASS kernel needs SM90: below it torch runs at::native::_grouped_mm_fallback
//    (libtorch_cuda, torch 2.15.0), one mm per group, which is how a preset without `groupedGemm`
//    (A100) prices a grouped GEMM: a plain GEMM and a launch per local expert.
//  - attention: FlashAttention-2 (what torch SDPA's flash backend runs), Dao 2023 (arXiv
//    2307.08691) §4.1 and the FlashAttention-3 paper's FA2 baselines (arXiv 2407.08608, Fig. 5-6):
//    on H100 causal head-dim 128 at 8k-16k tokens, forward ≈ 350 TFLOPS, backward ≈ 300 TFLOPS;
//    on A100 forward ≈ 190, backward ≈ 165 TFLOPS (FA2 paper Fig. 4-6; 225 fwd+bwd at best).
//  - memory-bound kernels (norms, SwiGLU, adds, casts, loss, optimizer): ~80 % of HBM peak, what
//    aten's vectorized elementwise kernels reach (a plain device copy reaches ~90 %: nvbandwidth /
//    BabelStream on H100 ≈ 3.0 TB/s of 3.35).
//  - launch: ~4 µs per eager aten kernel (PyTorch's dispatcher + cudaLaunchKernel; the GPU runs
//    ahead of the CPU only when kernels are longer than that).
//  - launch inside a CUDA graph (graph_trainer's cudagraph_pass replays the step as one graph): the
//    host work of each launch (Python, dispatcher, cudaLaunchKernel) is done once at capture, and
//    what is left per kernel is the GPU's own step from one graph node to the next. CUDA.jl's
//    documentation ("Graphs", cuda.juliagpu.org) measures 80 broadcast kernels at 260 µs launched
//    one by one (3.25 µs each) and 70 µs replayed as one graph, 3.5 µs of it on the CPU: 0.875 µs a
//    kernel, the kernels' own run time included (so an upper bound). NVIDIA's CUDA programming
//    guide (§4.2 CUDA Graphs): launch set-up is paid "once for the entire graph during instantiation".
//  - capacity: what torch.cuda reports as total memory, as torchtitan logs it ("CUDA capacity:
//    NVIDIA H100 80GB HBM3 with 79.18GiB memory", "NVIDIA H200 with 139.81GiB memory"; the 96 GB
//    H100 of its published runs: 95.0396 GiB, PR #165, and 40.96 GiB = 43.12 % in PR #1881);
//    79.25 GiB visible on an A100-SXM4-80GB.
//  - host link: PCIe, the same bandwidth each way (full duplex). NVIDIA's H100 datasheet (SXM5 and
//    NVL: "PCIe Gen5: 128GB/s") and H200 datasheet ("PCIe Gen5: 128GB/s") give both directions
//    together: PCIe Gen5 x16, 64 GB/s per direction; the A100 datasheet's "PCIe Gen4: 64GB/s" is 32
//    per direction. The copies are costed at that peak (an upper bound on what pinned copies reach).

import { ConfigError, oneOfMessage } from '../errors';
import { GIB, formatPercent, fixed } from '../util';

export type HardwareName = 'h100' | 'h100-96gb' | 'h200' | 'a100';

/** Which NVIDIA generation torch's comm_analysis.get_gpu_type() would report for this GPU. */
export type TorchGpuType = 'volta' | 'ampere' | 'hopper' | 'blackwell';

/** Achieved fraction of a peak, per op class (measured by public benchmarks; see the file header). */
export interface AchievedEfficiency {
  /** bf16 / fp16 GEMM at large, well-shaped sizes: MAMF / peak. */
  readonly gemm: number;
  /** Smallest GEMM dimension at which a GEMM runs at half of `gemm` (tile / wave quantization). */
  readonly gemmHalfDim: number;
  /**
   * torch._grouped_mm (MoE experts), of the bf16 peak before the tile factor at the per-expert
   * dimensions; absent: no grouped kernel (pre-SM90), one plain GEMM per expert.
   */
  readonly groupedGemm?: number;
  /** Flash attention forward (causal FLOPs counted once, as FlashAttention reports), of the bf16 peak. */
  readonly attentionFwd: number;
  /** Flash attention backward, of the bf16 peak. */
  readonly attentionBwd: number;
  /** Memory-bound kernels, of the HBM peak. */
  readonly hbm: number;
  /** Compute slowdown while a collective runs beside it (SM and HBM contention): 0.2 = 20 % slower. */
  readonly overlapSlowdown: number;
}

export interface HardwarePreset {
  readonly name: string;
  /** Dense bf16 tensor-core peak, FLOP/s. */
  readonly bf16Flops: number;
  /** fp32 peak without tensor cores (what elementwise kernels and fp32 matmuls get), FLOP/s. */
  readonly fp32Flops: number;
  /** HBM bandwidth, bytes/s. */
  readonly hbmBytesPerS: number;
  /** Per-kernel launch overhead, µs (eager PyTorch, no CUDA graphs). */
  readonly launchUs: number;
  /** Per-kernel cost inside a replayed CUDA graph, µs; absent: GRAPH_LAUNCH_US (see the file header). */
  readonly graphLaunchUs?: number;
  /**
   * Host link (PCIe) bandwidth per direction, bytes/s: graph_trainer's CPU offload copies over it;
   * absent on a custom preset → PCIe Gen5 x16's (see the file header).
   */
  readonly hostLinkBytesPerS?: number;
  /** HBM capacity as torch.cuda reports it (total_memory), bytes. */
  readonly hbmBytes: number;
  /** The datasheet's capacity, decimal GB (for labels). */
  readonly hbmDatasheetGB: number;
  /** What kernels achieve; absent on a custom preset → the plain roofline (efficiency 1). */
  readonly achieved?: AchievedEfficiency;
  /**
   * torch.get_gpu_type() matches "V100" / "A100" / "H100" / "B100|B200|B300" in the device name and
   * falls back to Ampere: an H200 is treated as Ampere (87.7 GB/s LL cap), an H100 as Hopper (141).
   */
  readonly torchGpuType: TorchGpuType;
}

const GB = 1e9;
const TFLOPS = 1e12;

/** PCIe Gen5 x16, one direction (the H100 / H200 datasheets' 128 GB/s is both together). */
const PCIE_GEN5_X16_BYTES_PER_S = 64 * GB;

/** The bytes/s one host copy gets on `hw`: its preset's host link, or PCIe Gen5 x16's. */
export function hostLinkBytesPerS(hw: HardwarePreset): number {
  return hw.hostLinkBytesPerS ?? PCIE_GEN5_X16_BYTES_PER_S;
}

/** A kernel's cost inside a replayed CUDA graph, µs: CUDA.jl's 70 µs for 80 graphed kernels (file header). */
const GRAPH_LAUNCH_US = 70 / 80;

/** What launching one kernel costs on `hw`, µs: eager (host-bound) or replayed from a CUDA graph. */
export function kernelLaunchUs(hw: HardwarePreset, cudaGraphs: boolean): number {
  return cudaGraphs ? (hw.graphLaunchUs ?? GRAPH_LAUNCH_US) : hw.launchUs;
}

/**
 * Compute overlapped with a collective runs 18.9 % slower on average (40.0 % at most) than alone:
 * "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning"
 * (arXiv 2507.03114, 2025), GPT and LLaMA training on 4 × H100, A100, MI250 and MI210. NCCL's
 * kernels keep SMs to themselves and pass their bytes through HBM two or three times
 * (NVIDIA/nccl#689, #1428). The paper's mean over its GPUs, for every preset.
 */
const OVERLAP_SLOWDOWN = 0.189;

// GH100 (H100 and H200 SXM): MAMF 792.1 / 989 (H100), 821.0 / 989 (GH200); FA2 ~350 / ~300 TFLOPS;
// torch._grouped_mm 0.32 (VeOmni PR #460, see the header)
const HOPPER_H100: AchievedEfficiency = {
  gemm: 0.8,
  gemmHalfDim: 128,
  groupedGemm: 0.32,
  attentionFwd: 0.35,
  attentionBwd: 0.3,
  hbm: 0.8,
  overlapSlowdown: OVERLAP_SLOWDOWN,
};
const HOPPER_H200: AchievedEfficiency = { ...HOPPER_H100, gemm: 0.83 };
// GA100: MAMF 267.9 / 312; FA2 ~190 fwd / ~165 bwd of 312
const AMPERE_A100: AchievedEfficiency = {
  gemm: 0.86,
  gemmHalfDim: 128,
  attentionFwd: 0.61,
  attentionBwd: 0.53,
  hbm: 0.8,
  overlapSlowdown: OVERLAP_SLOWDOWN,
};

/** A peak at `watts`, linear between H100 NVL (400 W) and H100 SXM (700 W) — the two datasheets. */
function atPowerLimit(watts: number, nvl: number, sxm: number): number {
  return nvl + ((sxm - nvl) * (watts - 400)) / (700 - 400);
}

const H100_SXM = {
  bf16Flops: 989 * TFLOPS,
  fp32Flops: 67 * TFLOPS,
  hbmBytesPerS: 3350 * GB,
  hostLinkBytesPerS: PCIE_GEN5_X16_BYTES_PER_S,
  launchUs: 4,
  achieved: HOPPER_H100,
  torchGpuType: 'hopper',
} as const;

export const HARDWARE_PRESETS: Readonly<Record<HardwareName, HardwarePreset>> = {
  // H100 SXM5 80 GB HBM3
  h100: { name: 'h100', ...H100_SXM, hbmBytes: 79.18 * GIB, hbmDatasheetGB: 80 },
  // The H100 of torchtitan's published runs (Meta's Grand Teton hosts; torchtitan
  // benchmarks/llama3_h100_202412_torchtitan.md): 96 GB HBM2e at 2.4 TB/s, a 500 W power limit, and
  // "the actual peak TFLOPs number is between SXM and NVL": interpolated linearly in the power
  // limit between H100 NVL (400 W, 835 TFLOPS bf16 dense, 60 fp32) and H100 SXM (700 W, 989, 67):
  // 886 and 62.3 at 500 W. torch reports 95.04 GiB (PR #1881: 40.96 GiB = 43.12 %).
  'h100-96gb': {
    ...H100_SXM,
    name: 'h100-96gb',
    bf16Flops: atPowerLimit(500, 835, 989) * TFLOPS,
    fp32Flops: atPowerLimit(500, 60, 67) * TFLOPS,
    hbmBytesPerS: 2400 * GB,
    hbmBytes: 95.0396 * GIB, // torchtitan PR #165: "95.0396 GiB GPU memory"
    hbmDatasheetGB: 96,
  },
  // H200 SXM: same GH100 compute as H100; 4.8 TB/s HBM3e, 141 GB
  h200: {
    name: 'h200',
    bf16Flops: 989 * TFLOPS,
    fp32Flops: 67 * TFLOPS,
    hbmBytesPerS: 4800 * GB,
    hostLinkBytesPerS: PCIE_GEN5_X16_BYTES_PER_S,
    launchUs: 4,
    hbmBytes: 139.81 * GIB,
    hbmDatasheetGB: 141,
    achieved: HOPPER_H200,
    torchGpuType: 'ampere', // torch's string match has no "H200" (see torchGpuType)
  },
  // A100 SXM4 80 GB: 312 TFLOPS bf16 dense, 19.5 TFLOPS fp32, 2.039 TB/s HBM2e
  a100: {
    name: 'a100',
    bf16Flops: 312 * TFLOPS,
    fp32Flops: 19.5 * TFLOPS,
    hbmBytesPerS: 2039 * GB,
    hostLinkBytesPerS: 32 * GB, // PCIe Gen4 x16, one direction
    launchUs: 4,
    hbmBytes: 79.25 * GIB,
    hbmDatasheetGB: 80,
    achieved: AMPERE_A100,
    torchGpuType: 'ampere',
  },
};

export const HARDWARE_NAMES = Object.keys(HARDWARE_PRESETS) as HardwareName[];

export function getHardware(name: string): HardwarePreset {
  if (!Object.hasOwn(HARDWARE_PRESETS, name))
    throw new ConfigError('hardware', oneOfMessage('hardware', HARDWARE_NAMES, name));
  return HARDWARE_PRESETS[name as HardwareName];
}

/** One line per assumption, for the explain panel and the CLI label. */
export function describeAchieved(hw: HardwarePreset): string {
  const a = hw.achieved;
  if (a === undefined) return `${hw.name}: plain roofline (peaks, no achieved efficiencies)`;
  const t = (f: number, peak: number) => `${Math.round((f * peak) / TFLOPS)} TFLOPS (${formatPercent(f * 100, 0)})`;
  return (
    `${hw.name}: GEMM ${t(a.gemm, hw.bf16Flops)} large, half that at min dim ${a.gemmHalfDim}; ` +
    `flash attention fwd ${t(a.attentionFwd, hw.bf16Flops)}, bwd ${t(a.attentionBwd, hw.bf16Flops)}; ` +
    `memory-bound ${fixed((a.hbm * hw.hbmBytesPerS) / 1e12, 2)} TB/s (${formatPercent(a.hbm * 100, 0)}); launch ` +
    `${hw.launchUs} µs`
  );
}
