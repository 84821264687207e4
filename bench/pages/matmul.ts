// Bench page 1: every numbered WGSL matmul variant (src/runtime/gpu) against TensorFlow.js's WebGPU
// matmul, same page, same adapter, f32, C = A·B with square N. Each side first checks its result
// against the CPU reference (src/runtime/cpu matmul: all rows up to 512, 32 evenly spaced rows
// above), then is timed by wall clock around queue.onSubmittedWorkDone() over `perRep` dispatches
// in one submit, median of `reps` (plus, for ours, timestamp-query GPU time where the adapter has it). Fairness: TF.js gets its OWN GPUDevice, requested from the same
// adapter with the same limits and features as ours (requestKernelDevice), wrapped in a
// WebGPUBackend — TF.js's default registration asks for a core adapter only and would find none
// in compatibility mode.
import * as tf from '@tensorflow/tfjs-core';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { matmul as cpuMatmul } from '../../src/runtime/cpu';
import {
  encodeMatmul,
  MATMUL_VARIANT_INFO,
  MATMUL_VARIANTS,
  requestKernelDevice,
  type MatmulVariant,
} from '../../src/runtime/gpu';
import { matmulFlops } from '../../src/graph/flops';
import { ready, seededFloats } from './bench_page';
import { midpointMedian } from '../../src/util';

export interface MatmulPageOptions {
  readonly sizes: readonly number[];
  /** Timed repetitions per size (after one warm-up), each of `perRep[size]` dispatches. */
  readonly reps: Readonly<Record<number, number>>;
  readonly perRep: Readonly<Record<number, number>>;
  /** Variants 1 (naive) and 2 (tiled) are skipped above this size: they alone would eat the time budget. */
  readonly simpleMaxSize: number;
  /** Sizes above this get no separate warm-up dispatch: the correctness run already compiled and touched everything. */
  readonly warmupMaxSize: number;
}

export interface MatmulCase {
  readonly size: number;
  readonly impl: string; // 'ours v3' | 'tfjs'
  readonly about: string;
  readonly ok: boolean;
  readonly maxErr: number;
  readonly checkedRows: number;
  readonly msPerMatmul: number; // wall, median over reps
  readonly gpuMs: number | null; // timestamp-query, one dispatch (ours only, where present)
  readonly gflops: number;
  readonly timesMs: readonly number[];
}

export interface MatmulPageResult {
  readonly adapter: string;
  readonly tfjsAdapter: string;
  readonly timestampQuery: boolean;
  readonly cases: readonly MatmulCase[];
}

const ABS_TOL = 1e-3;
const REL_TOL = 1e-3;

function checkRows(n: number): number[] {
  if (n <= 512) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: 32 }, (_, i) => Math.floor((i * (n - 1)) / 31));
}

/** CPU reference rows of A·B: the listed rows of A times all of B. */
function referenceRows(a: Float32Array, b: Float32Array, n: number, rows: readonly number[]): Float32Array {
  const sub = new Float32Array(rows.length * n);
  rows.forEach((r, i) => sub.set(a.subarray(r * n, (r + 1) * n), i * n));
  const out = new Float32Array(rows.length * n);
  cpuMatmul(sub, b, out, { M: rows.length, N: n, K: n, transA: false, transB: false });
  return out;
}

function compare(
  got: Float32Array,
  ref: Float32Array,
  n: number,
  rows: readonly number[],
): { ok: boolean; maxErr: number } {
  let maxErr = 0;
  let bad = 0;
  rows.forEach((r, i) => {
    for (let j = 0; j < n; j++) {
      const want = ref[i * n + j];
      const err = Math.abs(got[r * n + j] - want);
      maxErr = Math.max(maxErr, err);
      if (!(err <= ABS_TOL + Math.abs(want) * REL_TOL)) bad++;
    }
  });
  return { ok: bad === 0, maxErr };
}

async function readBuffer(device: GPUDevice, src: GPUBuffer, bytes: number): Promise<Float32Array> {
  const staging = device.createBuffer({
    label: 'bench readback',
    size: bytes,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
  });
  const enc = device.createCommandEncoder({ label: 'bench readback' });
  enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
}

function upload(device: GPUDevice, data: Float32Array, label: string, extra = 0): GPUBuffer {
  const buf = device.createBuffer({
    label,
    size: data.byteLength,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | extra,
  });
  device.queue.writeBuffer(buf, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
  return buf;
}

/**
 * Wall time per dispatch of `perRep` dispatches in one submit, per rep; with timestamp-query the
 * first dispatch of each rep also carries timestampWrites (GPU time of one matmul, no extra run).
 */
async function timeOurs(
  device: GPUDevice,
  timestamps: boolean,
  v: MatmulVariant,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  n: number,
  reps: number,
  perRep: number,
  warmup: boolean,
): Promise<{ timesMs: number[]; gpuMs: number[] }> {
  const dims = { M: n, N: n, K: n, transA: false, transB: false };
  const qs = timestamps
    ? device.createQuerySet({ label: 'bench matmul timestamps', type: 'timestamp', count: 2 })
    : null;
  const resolve =
    qs &&
    device.createBuffer({
      label: 'bench timestamps resolve',
      size: 16,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
  const once = async (k: number) => {
    const enc = device.createCommandEncoder({ label: `bench matmul ${v}` });
    const read =
      qs &&
      device.createBuffer({
        label: 'bench timestamps read',
        size: 16,
        usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
      });
    for (let i = 0; i < k; i++) {
      encodeMatmul(
        device,
        enc,
        v,
        a,
        b,
        c,
        dims,
        i === 0 && qs ? { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } : undefined,
      );
    }
    if (qs && resolve && read) {
      enc.resolveQuerySet(qs, 0, 2, resolve, 0);
      enc.copyBufferToBuffer(resolve, 0, read, 0, 16);
    }
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    const ms = (performance.now() - t0) / k;
    let gpu = NaN;
    if (read) {
      await read.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(read.getMappedRange());
      gpu = Number(t[1] - t[0]) / 1e6;
      read.destroy();
    }
    return { ms, gpu };
  };
  if (warmup) await once(1);
  const timesMs: number[] = [];
  const gpuMs: number[] = [];
  for (let r = 0; r < reps; r++) {
    const x = await once(perRep);
    timesMs.push(x.ms);
    gpuMs.push(x.gpu);
  }
  qs?.destroy();
  resolve?.destroy();
  return { timesMs, gpuMs };
}

async function timeTfjs(
  backend: WebGPUBackend,
  a: tf.Tensor2D,
  b: tf.Tensor2D,
  reps: number,
  perRep: number,
  warmup: boolean,
): Promise<number[]> {
  const be = backend as unknown as {
    commandEncoder: GPUCommandEncoder | null;
    endComputePassEncoder(): void;
    submitQueue(): void;
    device: GPUDevice;
  };
  const once = async (k: number) => {
    const t0 = performance.now();
    const outs: tf.Tensor[] = [];
    for (let i = 0; i < k; i++) outs.push(tf.matMul(a, b));
    // TF.js batches dispatches in an open pass; close it and submit, like our one submit.
    if (be.commandEncoder) {
      be.endComputePassEncoder();
      be.submitQueue();
    }
    await be.device.queue.onSubmittedWorkDone();
    const ms = (performance.now() - t0) / k;
    outs.forEach((t) => t.dispose());
    return ms;
  };
  if (warmup) await once(1);
  const out: number[] = [];
  for (let r = 0; r < reps; r++) out.push(await once(perRep));
  return out;
}

async function run(o: MatmulPageOptions): Promise<MatmulPageResult> {
  const ours = await requestKernelDevice();
  const theirs = await requestKernelDevice();
  // TF.js's kernels are registered under the name 'webgpu': replace its factory with our device.
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new WebGPUBackend(theirs.device, theirs.adapter.info));
  if (!(await tf.setBackend('webgpu'))) throw new Error('tfjs: setBackend(webgpu) failed');
  await tf.ready();
  const backend = tf.backend() as WebGPUBackend;
  const { device } = ours;
  const cases: MatmulCase[] = [];
  for (const n of o.sizes) {
    const A = seededFloats(n * n, 1000 + n);
    const B = seededFloats(n * n, 2000 + n);
    const rows = checkRows(n);
    const ref = referenceRows(A, B, n, rows);
    const flops = matmulFlops(n, n, n);
    const reps = o.reps[n] ?? 3;
    const perRep = o.perRep[n] ?? 1;
    const warmup = n <= o.warmupMaxSize; // above it the (seconds-long) checked run is the warm-up
    const a = upload(device, A, 'bench A');
    const b = upload(device, B, 'bench B');
    const c = device.createBuffer({
      label: 'bench C',
      size: n * n * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
    for (const v of MATMUL_VARIANTS) {
      if (v <= 2 && n > o.simpleMaxSize) continue;
      const enc = device.createCommandEncoder();
      encodeMatmul(device, enc, v, a, b, c, { M: n, N: n, K: n, transA: false, transB: false });
      device.queue.submit([enc.finish()]);
      const check = compare(await readBuffer(device, c, n * n * 4), ref, n, rows);
      const t = check.ok
        ? await timeOurs(device, ours.timestampQuery, v, a, b, c, n, reps, perRep, warmup)
        : { timesMs: [], gpuMs: [] };
      const timesMs = t.timesMs;
      const gpuMs = ours.timestampQuery && t.gpuMs.length ? midpointMedian(t.gpuMs) : null;
      const ms = midpointMedian(timesMs);
      console.info(`matmul ${n} ours v${v}: ok=${check.ok} ${ms.toFixed(1)} ms`);
      cases.push({
        size: n,
        impl: `ours v${v}`,
        about: MATMUL_VARIANT_INFO[v].about,
        ...check,
        checkedRows: rows.length,
        msPerMatmul: ms,
        gpuMs,
        gflops: flops / (ms * 1e6),
        timesMs,
      });
    }
    a.destroy();
    b.destroy();
    c.destroy();
    const ta = tf.tensor2d(A, [n, n]);
    const tb = tf.tensor2d(B, [n, n]);
    const tc = tf.matMul(ta, tb);
    const check = compare(new Float32Array(await tc.data()), ref, n, rows);
    tc.dispose();
    const timesMs = check.ok ? await timeTfjs(backend, ta, tb, reps, perRep, warmup) : [];
    const ms = midpointMedian(timesMs);
    console.info(`matmul ${n} tfjs: ok=${check.ok} ${ms.toFixed(1)} ms`);
    cases.push({
      size: n,
      impl: 'tfjs',
      about: 'tfjs-backend-webgpu 4.22 matMul',
      ...check,
      checkedRows: rows.length,
      msPerMatmul: ms,
      gpuMs: null,
      gflops: flops / (ms * 1e6),
      timesMs,
    });
    ta.dispose();
    tb.dispose();
  }
  device.destroy();
  return { adapter: ours.label, tfjsAdapter: theirs.label, timestampQuery: ours.timestampQuery, cases };
}

ready({ matmul: run as (o: never) => Promise<unknown> });
