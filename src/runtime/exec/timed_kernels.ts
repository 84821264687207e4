// A KernelBackend that times itself into the step's PhaseClock: run → compute (less any pipeline
// compilation it triggered → compile), upload → upload, download → readback. On WebGPU, kernels
// run asynchronously and a readback rides in the same submission as the kernels before it: the
// backend reports how long it waited for that submission (`drainMs`), and that wait is compute —
// otherwise every readback would carry the kernels queued before it.

import type { DeviceTensor, DownloadPart, HostArray, KernelBackend, KernelOp, OpAttrs, UploadPart } from '../kernels';
import type { PhaseClock } from './phases';

export function timedKernels(k: KernelBackend, clock: () => PhaseClock): KernelBackend {
  /** Queued kernels finish first (compute, the backend's drainMs), then the copy itself is the readback. */
  const drainThen = async (name: string, read: () => Promise<void>): Promise<void> => {
    const c = clock();
    const t0 = globalThis.performance.now();
    const d0 = k.drainMs ?? 0;
    await read();
    const end = globalThis.performance.now();
    const drain = (k.drainMs ?? 0) - d0;
    c.add('compute', drain, 'drain', t0 + drain);
    c.add('readback', end - t0 - drain, name, end);
  };
  return {
    kind: k.kind,
    label: k.label,
    get compileMs() {
      return k.compileMs;
    },
    get drainMs() {
      return k.drainMs;
    },
    create: (id, length, type) => k.create(id, length, type),
    upload: (t: DeviceTensor, data: HostArray, offset?: number) =>
      clock().span('upload', t.id, () => k.upload(t, data, offset)),
    uploadScatter: (src: Float32Array, parts: readonly UploadPart[]) =>
      clock().span('upload', parts.length === 1 ? parts[0].t.id : `${parts.length} slices`, () =>
        k.uploadScatter(src, parts),
      ),
    async download(t: DeviceTensor, into: HostArray): Promise<void> {
      await drainThen(t.id, () => k.download(t, into));
    },
    async downloadAll(parts: readonly DownloadPart[]): Promise<void> {
      await drainThen(parts.length === 1 ? parts[0].t.id : `${parts.length} tensors`, () => k.downloadAll(parts));
    },
    run(
      op: KernelOp,
      attrs: OpAttrs,
      inputs: readonly DeviceTensor[],
      outputs: readonly DeviceTensor[],
      step?: number,
    ): void {
      const c = clock();
      c.span('compute', op, () => {
        const c0 = k.compileMs ?? 0;
        k.run(op, attrs, inputs, outputs, step);
        c.add('compile', (k.compileMs ?? 0) - c0, `compile ${op}`);
      });
    },
    sync: () => clock().spanAsync('compute', 'sync', () => k.sync()),
    release: (t) => k.release(t),
    destroy: () => k.destroy(),
  };
}
