// Storage-buffer pool, one per device (WeakMap keyed by GPUDevice), free lists keyed by byte
// size. Released tensors return their buffer here; a reused buffer is cleared by the backend.
// No drain: destroying the device destroys its buffers, and the WeakMap lets the pool go with it.
import { USAGE } from './usage';

const POOLS = new WeakMap<GPUDevice, Map<number, GPUBuffer[]>>();

const STORAGE_USAGE = USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST;

/** Byte size of a tensor's buffer: ≥ 4 and a multiple of 4 (WebGPU copy alignment). */
export const bufferBytes = (length: number) => Math.max(4, length * 4);

export function acquireBuffer(device: GPUDevice, bytes: number, label: string): { buffer: GPUBuffer; reused: boolean } {
  const free = POOLS.get(device)?.get(bytes);
  const buffer = free?.pop();
  if (buffer) {
    buffer.label = label;
    return { buffer, reused: true };
  }
  return { buffer: device.createBuffer({ label, size: bytes, usage: STORAGE_USAGE }), reused: false };
}

export function releaseBuffer(device: GPUDevice, buffer: GPUBuffer): void {
  let pool = POOLS.get(device);
  if (!pool) {
    pool = new Map();
    POOLS.set(device, pool);
  }
  let free = pool.get(buffer.size);
  if (!free) {
    free = [];
    pool.set(buffer.size, free);
  }
  buffer.label = `fsdp-sim pooled ${buffer.size} B`;
  free.push(buffer);
}
