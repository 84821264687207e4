// Errors of the WebGPU kernel backend: a missing API or adapter, a limit below what a kernel
// needs, a lost device, or a validation error reported by the implementation.
import { FsdpSimError } from '../../errors';

export class GpuError extends FsdpSimError {
  constructor(message: string) {
    super('webgpu', message);
  }
}

/** `maxStorageBufferBindingSize is 134217728 on this adapter, kernel needs ≥ 268435456 (…)` */
export class GpuLimitError extends GpuError {
  constructor(
    readonly limit: string,
    readonly found: number,
    readonly required: number,
    why: string,
  ) {
    super(`${limit} is ${found} on this device, ${why} needs ≥ ${required}`);
  }
}
