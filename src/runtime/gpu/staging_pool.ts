// Staging buffers, pooled per backend by power-of-two size: readback (MAP_READ | COPY_DST) and
// upload (COPY_SRC | COPY_DST). A live step stages once per collective each way, and a new buffer
// each time costs an allocation (and its zero fill; in browsers a shared-memory mapping). Buffers
// go back unmapped; destroy() frees them all.
import { USAGE } from './usage';

export const READBACK_USAGE = USAGE.MAP_READ | USAGE.COPY_DST;
export const UPLOAD_USAGE = USAGE.COPY_SRC | USAGE.COPY_DST;

const MIN_BYTES = 256;

export class StagingPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly all = new Set<GPUBuffer>();

  constructor(
    private readonly device: GPUDevice,
    private readonly usage: number,
    private readonly label: string,
  ) {}

  /** A staging buffer of at least `bytes` (a power of two ≥ MIN_BYTES). */
  acquire(bytes: number): GPUBuffer {
    let size = MIN_BYTES;
    while (size < bytes) size *= 2;
    const b = this.free.get(size)?.pop();
    if (b !== undefined) return b;
    const created = this.device.createBuffer({
      label: `fsdp-sim ${this.label} staging ${size} B`,
      size,
      usage: this.usage,
    });
    this.all.add(created);
    return created;
  }

  /** Back to the pool (unmapped). A buffer this pool did not make is destroyed instead. */
  release(b: GPUBuffer): void {
    if (!this.all.has(b)) return b.destroy();
    let list = this.free.get(b.size);
    if (list === undefined) this.free.set(b.size, (list = []));
    list.push(b);
  }

  destroy(): void {
    for (const b of this.all) b.destroy();
    this.all.clear();
    this.free.clear();
  }
}
