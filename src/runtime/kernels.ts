// Kernel-backend contract: one interface, two implementations — CPU reference kernels
// (src/runtime/cpu, the oracle and the fallback) and WGSL on WebGPU (src/runtime/gpu).
// The executor runs each compute node of a schedule through `run`, op by op.

import type { ComputeOp } from '../graph';
import type { MoeKernelOp } from './cpu';

export type ElemType = 'f32' | 'i32';
export type HostArray = Float32Array | Int32Array;
/** What `run` runs: a graph compute op, or one of the MoE kernels the executor plans on the host. */
export type KernelOp = ComputeOp | MoeKernelOp;
export type OpAttrs = Readonly<Record<string, number | string | boolean>>;

/** One slice of a scatter upload: src[from, from + length) → t[at, at + length). */
export interface UploadPart {
  readonly t: DeviceTensor;
  readonly from: number; // element offset in the source array
  readonly length: number; // elements
  readonly at: number; // element offset in the tensor
}

/** One tensor of a batched download and where its first `into.length` elements go. */
export interface DownloadPart {
  readonly t: DeviceTensor;
  readonly into: HostArray;
}

/** A tensor living on the backend (a GPUBuffer or a host array). */
export interface DeviceTensor {
  readonly id: string;
  readonly length: number; // elements
  readonly type: ElemType;
}

/** One op a schedule runs, with its attrs: what warm() compiles for. */
export interface KernelUse {
  readonly op: string;
  readonly attrs?: OpAttrs;
}

export interface KernelBackend {
  readonly kind: 'webgpu' | 'cpu';
  readonly label: string; // e.g. 'webgpu: google swiftshader (fallback)' or 'cpu reference'
  /** Kernels 'auto' fell back to the CPU: why there is no WebGPU device (the worker shell says). */
  readonly noWebGpu?: string;
  create(id: string, length: number, type: ElemType): DeviceTensor;
  /** Copy host data (may be a view on a SharedArrayBuffer) into the tensor at element offset. */
  upload(t: DeviceTensor, data: HostArray, offset?: number): void;
  /** Copy the tensor's contents to host memory (may be a SharedArrayBuffer view). */
  download(t: DeviceTensor, into: HostArray): Promise<void>;
  /** Slices of one host array into several tensors as one upload (WebGPU: one write, device-side copies). */
  uploadScatter(src: Float32Array, parts: readonly UploadPart[]): void;
  /** Several downloads as one readback (WebGPU: one staging buffer, one map): a bucket's members at once. */
  downloadAll(parts: readonly DownloadPart[]): Promise<void>;
  /** Enqueue one op (semantics in src/graph/ops.ts, cpu/moe_ops.ts). `step` is AdamW's 1-based step number. */
  run(
    op: KernelOp,
    attrs: OpAttrs,
    inputs: readonly DeviceTensor[],
    outputs: readonly DeviceTensor[],
    step?: number,
  ): void;
  /**
   * Wait for queued work. Returns measured device time (µs) of the work since the last sync, when the backend can
   * measure it.
   */
  sync(): Promise<number | undefined>;
  /**
   * Cumulative ms downloads spent waiting for the kernels submitted with them (WebGPU); absent where `run` is
   * synchronous (CPU).
   */
  readonly drainMs?: number;
  /**
   * Compile what `run` will need for `ops` (default: every kernel) ahead of the first step (WebGPU pipelines,
   * concurrently); `onCompiled(done, total)` first with 0, then after each one. Absent where nothing compiles.
   */
  warm?(ops?: readonly KernelUse[], onCompiled?: (done: number, total: number) => void): Promise<void>;
  /** Cumulative ms spent compiling pipelines on first use (WebGPU); absent where nothing compiles. */
  readonly compileMs?: number;
  release(t: DeviceTensor): void;
  destroy(): void;
}
