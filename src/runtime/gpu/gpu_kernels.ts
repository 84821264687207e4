// WebGPU KernelBackend: tensors are pooled storage buffers, run() records one compute pass per
// op on a pending encoder (submitted at sync/download/upload), sync() reports device time from
// timestamp queries when the device has them. Checked against the CPU backend in test/browser.
import { ConfigError } from '../../errors';
import { checkMoeTensors, checkTensors, isMoeKernelOp } from '../cpu';
import type {
  DeviceTensor,
  DownloadPart,
  ElemType,
  HostArray,
  KernelBackend,
  KernelOp,
  KernelUse,
  OpAttrs,
  UploadPart,
} from '../kernels';
import { acquireBuffer, bufferBytes, releaseBuffer } from './buffer_pool';
import { GpuError, GpuLimitError } from './gpu_errors';
import type { MatmulVariant } from './gpu_matmul';
import { defaultMatmulVariant, matmulVariantInfo } from './gpu_matmul';
import { planMoeOp } from './gpu_moe';
import { type PlanContext, planOp } from './gpu_ops';
import { compileMsOf } from './pipelines';
import { pipelinesFor, precompileKernels, precompilePipelines } from './precompile';
import { GpuQueue } from './queue';
import { READBACK_USAGE, StagingPool, UPLOAD_USAGE } from './staging_pool';
import { MAP_READ_MODE } from './usage';

interface GpuTensor extends DeviceTensor {
  readonly buffer: GPUBuffer;
}

export interface GpuKernelsOptions {
  /** Which numbered matmul kernel `matmul` runs (default 3, the register-blocked one). */
  matmulVariant?: MatmulVariant;
  /** Shown as the backend label, e.g. KernelDevice.label from requestKernelDevice. */
  label?: string;
  /** Time passes with timestamp queries when the device has 'timestamp-query' (default true). */
  timestamps?: boolean;
}

export interface GpuKernelBackend extends KernelBackend {
  readonly kind: 'webgpu';
  readonly device: GPUDevice;
  /** Buffer of a tensor created by this backend (for tools that record their own passes). */
  bufferOf(t: DeviceTensor): GPUBuffer;
}

/** What makes the backend unusable: destroy(), a lost device, an uncaptured WebGPU error. */
interface DeviceHealth {
  /** Throws a GpuError naming `what` when the backend can no longer run it. */
  alive(what: string): void;
  /** Marks the backend destroyed; false when it already was. */
  markDestroyed(): boolean;
  /** Stops listening for uncaptured errors. */
  unlisten(): void;
}

function watchDevice(device: GPUDevice, label: string): DeviceHealth {
  let lost: GPUDeviceLostInfo | null = null;
  let uncaptured: GPUError | null = null;
  let destroyed = false;
  device.lost.then((info) => {
    lost = info;
  });
  const onError = (ev: Event) => {
    uncaptured ??= (ev as GPUUncapturedErrorEvent).error;
  };
  device.addEventListener('uncapturederror', onError);
  return {
    alive(what: string): void {
      if (destroyed) throw new GpuError(`${what} called after destroy() on ${label}`);
      if (lost) {
        const cause = `(${lost.reason}): ${lost.message || 'no message'}`;
        throw new GpuError(`WebGPU device lost ${cause}; ${what} cannot run. Reload, or use createCpuKernels().`);
      }
      if (uncaptured) {
        const e = uncaptured;
        uncaptured = null;
        throw new GpuError(`uncaptured WebGPU error before ${what}: ${e.message}`);
      }
    },
    markDestroyed(): boolean {
      if (destroyed) return false;
      destroyed = true;
      return true;
    },
    unlisten(): void {
      device.removeEventListener('uncapturederror', onError);
    },
  };
}

interface Readback {
  downloadAll(parts: readonly DownloadPart[]): Promise<void>;
  /** Cumulative ms downloads spent waiting for the kernels submitted with them. */
  drainMs(): number;
  destroy(): void;
}

/** Every part copied into one pooled staging buffer, one submit, one map: a bucket costs one round trip. */
function createReadback(
  device: GPUDevice,
  queue: GpuQueue,
  alive: (what: string) => void,
  bufferOf: (t: DeviceTensor) => GPUBuffer,
): Readback {
  const staging = new StagingPool(device, READBACK_USAGE, 'readback');
  let drainMs = 0;
  async function downloadAll(parts: readonly DownloadPart[]): Promise<void> {
    const what = parts.length === 1 ? `download('${parts[0].t.id}')` : `downloadAll(${parts.length} tensors)`;
    alive(what);
    const offsets: number[] = [];
    let total = 0;
    for (const { t, into } of parts) {
      offsets.push(total);
      total += bufferBytes(Math.min(into.length, t.length));
    }
    const buf = staging.acquire(total);
    const enc = queue.enc(); // the kernels recorded since the last collective: one submission with the copies
    parts.forEach(({ t, into }, i) => {
      const bytes = bufferBytes(Math.min(into.length, t.length));
      enc.copyBufferToBuffer(bufferOf(t), 0, buf, offsets[i], bytes);
    });
    queue.flush();
    const t0 = globalThis.performance.now();
    await device.queue.onSubmittedWorkDone(); // the kernels run: the step breakdown counts this wait as compute
    drainMs += globalThis.performance.now() - t0;
    try {
      await buf.mapAsync(MAP_READ_MODE, 0, total);
    } catch (e) {
      buf.destroy();
      alive(what);
      throw new GpuError(`${what} failed to map its staging buffer: ${(e as Error).message}`);
    }
    const mapped = buf.getMappedRange(0, total);
    parts.forEach(({ t, into }, i) => {
      const n = Math.min(into.length, t.length);
      if (into instanceof Float32Array) into.set(new Float32Array(mapped, offsets[i], n));
      else into.set(new Int32Array(mapped, offsets[i], n));
    });
    buf.unmap();
    staging.release(buf);
  }
  return { downloadAll, drainMs: () => drainMs, destroy: () => staging.destroy() };
}

/** A pooled storage buffer for a new tensor, checked against the device's limits. */
function createTensor(device: GPUDevice, queue: GpuQueue, id: string, length: number, type: ElemType): GpuTensor {
  if (!Number.isInteger(length) || length < 0) {
    throw new ConfigError('length', `tensor '${id}' length must be an integer ≥ 0, got ${length}`);
  }
  if (type !== 'f32' && type !== 'i32') {
    throw new ConfigError('type', `tensor '${id}' type must be one of [f32, i32], got ${JSON.stringify(type)}`);
  }
  const bytes = bufferBytes(length);
  const max = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  if (bytes > max) {
    const limit = bytes > device.limits.maxBufferSize ? 'maxBufferSize' : 'maxStorageBufferBindingSize';
    throw new GpuLimitError(limit, max, bytes, `tensor '${id}' (${length} × 4 bytes)`);
  }
  const { buffer, reused } = acquireBuffer(device, bytes, `tensor ${id}`);
  if (reused) queue.enc().clearBuffer(buffer); // fresh tensors read as zeros, like the CPU backend
  return { id, length, type, buffer };
}

function checkUpload(t: DeviceTensor, data: HostArray, offset: number): void {
  if (offset < 0 || !Number.isInteger(offset) || offset + data.length > t.length) {
    throw new ConfigError(
      'upload',
      `upload into '${t.id}' of ${data.length} elements at offset ${offset} overflows its ${t.length} elements`,
    );
  }
  if ((t.type === 'f32') !== data instanceof Float32Array) {
    throw new ConfigError('upload', `upload into '${t.id}' (${t.type}) got a ${data.constructor.name}`);
  }
}

function checkScatter(src: Float32Array, parts: readonly UploadPart[]): void {
  for (const p of parts) {
    const inSource = p.from >= 0 && p.from + p.length <= src.length;
    const inTarget = p.at >= 0 && p.at + p.length <= p.t.length;
    if (p.t.type !== 'f32' || !inSource || !inTarget) {
      throw new ConfigError(
        'upload',
        `uploadScatter slice [${p.from}, +${p.length}) of ${src.length} into '${p.t.id}' (${p.t.type}, ` +
          `${p.t.length} elements) at ${p.at} does not fit`,
      );
    }
  }
}

/** Checks `op`'s tensors, then records one compute pass on the pending encoder; its scratch buffers go back after. */
function recordOp(
  device: GPUDevice,
  queue: GpuQueue,
  matmulVariant: MatmulVariant,
  bufferOf: (t: DeviceTensor) => GPUBuffer,
  op: KernelOp,
  attrs: OpAttrs,
  inputs: readonly DeviceTensor[],
  outputs: readonly DeviceTensor[],
  step?: number,
): void {
  if (isMoeKernelOp(op)) checkMoeTensors(op, attrs, inputs, outputs);
  else checkTensors(op, attrs, inputs, outputs);
  queue.ensureRoom();
  const scratch: GPUBuffer[] = [];
  queue.scoped(() => {
    const ctx: PlanContext = {
      device,
      matmulVariant,
      uniform: (data) => queue.uniform(data),
      scratch: (n, what) => {
        const b = acquireBuffer(device, bufferBytes(n), `scratch ${what}`).buffer;
        scratch.push(b);
        return b;
      },
    };
    const [ins, outs] = [inputs.map(bufferOf), outputs.map(bufferOf)];
    const dispatches = isMoeKernelOp(op)
      ? planMoeOp(ctx, op, attrs, ins, outs)
      : planOp(ctx, op, attrs, ins, outs, step);
    queue.pass(`${op} [${outputs.map((o) => o.id).join(', ')}]`, dispatches);
  });
  // Later passes that reuse a scratch buffer run after this one (pass order), so it can go back now.
  for (const b of scratch) releaseBuffer(device, b);
}

/**
 * One write into a pooled staging buffer, then device-side copies recorded in order with the
 * kernels around them (no flush: they ride in the next stretch's submission). The staging
 * buffer goes back to the pool only once submitted, so no later write can overtake its copies.
 */
function recordScatter(
  device: GPUDevice,
  queue: GpuQueue,
  uploads: StagingPool,
  bufferOf: (t: DeviceTensor) => GPUBuffer,
  src: Float32Array,
  parts: readonly UploadPart[],
): void {
  const stage = uploads.acquire(bufferBytes(src.length));
  queue.scoped(() => {
    device.queue.writeBuffer(stage, 0, src.buffer, src.byteOffset, src.byteLength);
    const enc = queue.enc();
    for (const p of parts)
      if (p.length > 0) enc.copyBufferToBuffer(stage, p.from * 4, bufferOf(p.t), p.at * 4, p.length * 4);
  });
  queue.afterSubmit(() => uploads.release(stage));
}

export function createGpuKernels(device: GPUDevice, opts: GpuKernelsOptions = {}): GpuKernelBackend {
  const matmulVariant = opts.matmulVariant ?? defaultMatmulVariant(device.adapterInfo);
  matmulVariantInfo(matmulVariant);
  const label = opts.label ?? `webgpu: ${device.label || 'device'}`;
  const timestamps = opts.timestamps !== false && device.features.has('timestamp-query');
  const queue = new GpuQueue(device, 'fsdp-sim kernels', timestamps);
  const health = watchDevice(device, label);
  const alive = (what: string) => health.alive(what);
  const bufferOf = (t: DeviceTensor): GPUBuffer => {
    const b = (t as GpuTensor).buffer;
    if (!b) throw new ConfigError('tensor', `tensor '${t.id}' was not created by this WebGPU backend`);
    return b;
  };
  const readback = createReadback(device, queue, alive, bufferOf);
  const uploads = new StagingPool(device, UPLOAD_USAGE, 'upload');
  const downloadAll = (parts: readonly DownloadPart[]) => readback.downloadAll(parts);

  return {
    kind: 'webgpu',
    label,
    device,
    bufferOf,
    get compileMs() {
      return compileMsOf(device);
    },
    get drainMs() {
      return readback.drainMs();
    },
    create(id: string, length: number, type: ElemType): GpuTensor {
      alive(`create('${id}')`);
      return createTensor(device, queue, id, length, type);
    },
    upload(t: DeviceTensor, data: HostArray, offset = 0): void {
      alive(`upload('${t.id}')`);
      checkUpload(t, data, offset);
      queue.flush(); // recorded ops that read t must see its old contents
      queue.scoped(() => {
        device.queue.writeBuffer(bufferOf(t), offset * 4, data.buffer, data.byteOffset, data.byteLength);
      });
    },
    uploadScatter(src: Float32Array, parts: readonly UploadPart[]): void {
      alive(`uploadScatter(${parts.length} slices)`);
      checkScatter(src, parts);
      recordScatter(device, queue, uploads, bufferOf, src, parts);
    },
    download(t: DeviceTensor, into: HostArray): Promise<void> {
      return downloadAll([{ t, into }]);
    },
    downloadAll,
    run(
      op: KernelOp,
      attrs: OpAttrs,
      inputs: readonly DeviceTensor[],
      outputs: readonly DeviceTensor[],
      step?: number,
    ): void {
      alive(`run('${op}')`);
      recordOp(device, queue, matmulVariant, bufferOf, op, attrs, inputs, outputs, step);
    },
    async sync(): Promise<number | undefined> {
      alive('sync()');
      const us = await queue.sync();
      alive('sync()');
      return us;
    },
    async warm(ops?: readonly KernelUse[], onCompiled?: (done: number, total: number) => void): Promise<void> {
      alive('warm()');
      // Pipelines live per GPUDevice and a device cannot leave its worker: each rank compiles its own,
      // all ranks at once while the workers start, instead of one by one inside step 1.
      if (ops === undefined) return precompileKernels(device, { matmulVariants: [matmulVariant] });
      await precompilePipelines(device, pipelinesFor(ops, matmulVariant), onCompiled);
    },
    release(t: DeviceTensor): void {
      releaseBuffer(device, bufferOf(t));
    },
    destroy(): void {
      if (!health.markDestroyed()) return;
      queue.destroy();
      readback.destroy();
      uploads.destroy();
      health.unlisten();
    },
  };
}
