// Accelerator presets for the roofline: dense peaks, HBM bandwidth and capacity, launch overhead.
// Sources: NVIDIA H100 Tensor Core GPU datasheet (SXM5), NVIDIA H200 datasheet (SXM),
// NVIDIA A100 datasheet (SXM4 80 GB). Peaks are dense (no 2:4 sparsity).

import { ConfigError, oneOfMessage } from '../errors';

export type HardwareName = 'h100' | 'h200' | 'a100';

/** Which NVIDIA generation torch's comm_analysis.get_gpu_type() would report for this GPU. */
export type TorchGpuType = 'volta' | 'ampere' | 'hopper' | 'blackwell';

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
  /** HBM capacity, bytes. */
  readonly hbmBytes: number;
  /**
   * torch.get_gpu_type() matches "V100" / "A100" / "H100" / "B100|B200|B300" in the device name and
   * falls back to Ampere: an H200 is treated as Ampere (87.7 GB/s LL cap), an H100 as Hopper (141).
   */
  readonly torchGpuType: TorchGpuType;
}

const GB = 1e9;
const TFLOPS = 1e12;

export const HARDWARE_PRESETS: Readonly<Record<HardwareName, HardwarePreset>> = {
  // H100 SXM5: 989 TFLOPS bf16 dense, 67 TFLOPS fp32, 3.35 TB/s HBM3, 80 GB
  h100: {
    name: 'h100',
    bf16Flops: 989 * TFLOPS,
    fp32Flops: 67 * TFLOPS,
    hbmBytesPerS: 3350 * GB,
    launchUs: 4,
    hbmBytes: 80 * GB,
    torchGpuType: 'hopper',
  },
  // H200 SXM: same GH100 compute as H100; 4.8 TB/s HBM3e, 141 GB
  h200: {
    name: 'h200',
    bf16Flops: 989 * TFLOPS,
    fp32Flops: 67 * TFLOPS,
    hbmBytesPerS: 4800 * GB,
    launchUs: 4,
    hbmBytes: 141 * GB,
    torchGpuType: 'ampere', // torch's string match has no "H200" (see torchGpuType)
  },
  // A100 SXM4 80 GB: 312 TFLOPS bf16 dense, 19.5 TFLOPS fp32, 2.039 TB/s HBM2e, 80 GB
  a100: {
    name: 'a100',
    bf16Flops: 312 * TFLOPS,
    fp32Flops: 19.5 * TFLOPS,
    hbmBytesPerS: 2039 * GB,
    launchUs: 4,
    hbmBytes: 80 * GB,
    torchGpuType: 'ampere',
  },
};

export const HARDWARE_NAMES = Object.keys(HARDWARE_PRESETS) as HardwareName[];

export function getHardware(name: string): HardwarePreset {
  if (!Object.hasOwn(HARDWARE_PRESETS, name)) throw new ConfigError('hardware', oneOfMessage('hardware', HARDWARE_NAMES, name));
  return HARDWARE_PRESETS[name as HardwareName];
}
