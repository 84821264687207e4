// Command recording for one backend: a pending encoder that collects one compute pass per op,
// uniform buffers recycled per submit, timestamp queries per pass (when the device has
// 'timestamp-query'), and validation error scopes whose results `sync()` reports.
// Ordering rule: queue.writeBuffer runs before the next submit, so uploads flush first.
import { GpuError } from './gpu_errors';
import { USAGE, MAP_READ_MODE } from './usage';

const MAX_PASSES_PER_SUBMIT = 256; // query set holds 2 timestamps per pass

export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindings: readonly (readonly [binding: number, buffer: GPUBuffer])[];
  readonly workgroups: readonly [number, number?, number?];
  readonly label: string;
}

export class GpuQueue {
  private encoder: GPUCommandEncoder | null = null;
  private passes = 0;
  private uniforms: GPUBuffer[] = [];
  private uniformsUsed = 0;
  private readonly querySet: GPUQuerySet | null;
  private readonly resolve: GPUBuffer | null;
  private readbacks: { buffer: GPUBuffer; passes: number }[] = [];
  private errorScopes: Promise<GPUError | null>[] = [];
  private submitted = 0;
  private afterSubmitFns: (() => void)[] = [];

  constructor(
    readonly device: GPUDevice,
    readonly label: string,
    timestamps: boolean,
  ) {
    this.querySet = timestamps
      ? device.createQuerySet({ label: `${label} timestamps`, type: 'timestamp', count: 2 * MAX_PASSES_PER_SUBMIT })
      : null;
    this.resolve = timestamps
      ? device.createBuffer({
          label: `${label} timestamp resolve`,
          size: 16 * MAX_PASSES_PER_SUBMIT,
          usage: USAGE.QUERY_RESOLVE | USAGE.COPY_SRC,
        })
      : null;
  }

  get measuresTime(): boolean {
    return this.querySet !== null;
  }

  /** The pending encoder (created on demand); commands recorded here run at the next flush. */
  enc(): GPUCommandEncoder {
    this.encoder ??= this.device.createCommandEncoder({ label: `${this.label} submit ${this.submitted}` });
    return this.encoder;
  }

  /** Call before an op writes its uniforms: submits first if the query set is full. */
  ensureRoom(): void {
    if (this.passes >= MAX_PASSES_PER_SUBMIT) this.flush();
  }

  /** A uniform buffer holding `data`, valid for the pending submit. */
  uniform(data: ArrayBuffer): GPUBuffer {
    const size = Math.max(16, Math.ceil(data.byteLength / 16) * 16);
    if (size > 64) throw new GpuError(`uniform block of ${data.byteLength} bytes exceeds the pooled 64-byte blocks`);
    let u = this.uniforms[this.uniformsUsed];
    if (!u) {
      u = this.device.createBuffer({
        label: `${this.label} params ${this.uniformsUsed}`,
        size: 64,
        usage: USAGE.UNIFORM | USAGE.COPY_DST,
      });
      this.uniforms.push(u);
    }
    this.uniformsUsed++;
    this.device.queue.writeBuffer(u, 0, data);
    return u;
  }

  /** Records one compute pass (timed when possible) holding `dispatches` in order. */
  pass(label: string, dispatches: readonly Dispatch[]): void {
    if (this.passes >= MAX_PASSES_PER_SUBMIT) {
      throw new GpuError(`${this.label}: ${label} recorded without ensureRoom(); ${this.passes} passes pending`);
    }
    const timestampWrites = this.querySet
      ? {
          querySet: this.querySet,
          beginningOfPassWriteIndex: 2 * this.passes,
          endOfPassWriteIndex: 2 * this.passes + 1,
        }
      : undefined;
    const pass = this.enc().beginComputePass({ label, timestampWrites });
    for (const d of dispatches) {
      const layout = d.pipeline.getBindGroupLayout(0);
      const bindGroup = this.device.createBindGroup({
        label: `${d.label} bind group`,
        layout,
        entries: d.bindings.map(([binding, buffer]) => ({ binding, resource: { buffer } })),
      });
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1] ?? 1, d.workgroups[2] ?? 1);
    }
    pass.end();
    this.passes++;
  }

  /** Runs `fn` inside a validation error scope; the error (if any) surfaces at sync(). */
  scoped<T>(fn: () => T): T {
    this.device.pushErrorScope('validation');
    try {
      return fn();
    } finally {
      this.errorScopes.push(this.device.popErrorScope());
    }
  }

  /** Runs `fn` once the pending encoder is submitted (e.g. return a staging buffer its copies read). */
  afterSubmit(fn: () => void): void {
    this.afterSubmitFns.push(fn);
  }

  /** Submits the pending encoder (with the timestamp resolve) if it holds anything. */
  flush(): void {
    if (!this.encoder) return;
    const enc = this.encoder;
    if (this.querySet && this.resolve && this.passes > 0) {
      const bytes = 16 * this.passes;
      enc.resolveQuerySet(this.querySet, 0, 2 * this.passes, this.resolve, 0);
      const readback = this.device.createBuffer({
        label: `${this.label} timestamp readback`,
        size: bytes,
        usage: USAGE.MAP_READ | USAGE.COPY_DST,
      });
      enc.copyBufferToBuffer(this.resolve, 0, readback, 0, bytes);
      this.readbacks.push({ buffer: readback, passes: this.passes });
    }
    this.scoped(() => this.device.queue.submit([enc.finish()]));
    this.encoder = null;
    this.passes = 0;
    this.uniformsUsed = 0; // writeBuffer after a submit is ordered after it: safe to reuse
    this.submitted++;
    const fns = this.afterSubmitFns;
    this.afterSubmitFns = [];
    for (const fn of fns) fn();
  }

  /** Flushes, waits for the queue, reports the first validation error, returns device µs. */
  async sync(): Promise<number | undefined> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    const scopes = this.errorScopes;
    this.errorScopes = [];
    const errors = (await Promise.all(scopes)).filter((e): e is GPUError => e !== null);
    if (errors.length > 0) {
      throw new GpuError(`${this.label}: ${errors.length} WebGPU validation error(s); first: ${errors[0].message}`);
    }
    if (!this.querySet) return undefined;
    const readbacks = this.readbacks;
    this.readbacks = [];
    let ns = 0n;
    for (const r of readbacks) {
      await r.buffer.mapAsync(MAP_READ_MODE);
      const t = new BigUint64Array(r.buffer.getMappedRange());
      for (let i = 0; i < r.passes; i++) if (t[2 * i + 1] > t[2 * i]) ns += t[2 * i + 1] - t[2 * i];
      r.buffer.unmap();
      r.buffer.destroy();
    }
    return Number(ns) / 1000;
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolve?.destroy();
    for (const u of this.uniforms) u.destroy();
    for (const r of this.readbacks) r.buffer.destroy();
    this.uniforms = [];
    this.readbacks = [];
  }
}
