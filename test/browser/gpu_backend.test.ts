// Host-side behaviour of the WebGPU backend: SharedArrayBuffer views in and out, zeroed tensors
// from the pool, loud errors for limits, validation failures and a lost device.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createGpuKernels,
  defaultMatmulVariant,
  GpuError,
  GpuLimitError,
  type GpuKernelBackend,
  type KernelDevice,
  requestKernelDevice,
} from '../../src/runtime/gpu';

const level = inject('webgpuFeatureLevel');
let kd: KernelDevice;
let k: GpuKernelBackend;

beforeAll(async () => {
  kd = await requestKernelDevice({ featureLevel: level }); // throws (fails every test) without WebGPU
  k = createGpuKernels(kd.device, { label: kd.label });
});

afterAll(() => {
  k?.destroy();
  kd?.device.destroy();
});

describe('defaultMatmulVariant', () => {
  it('picks the storage-direct variant 4 on the CPU-backed adapters these tests run on', () => {
    expect(defaultMatmulVariant(kd.device.adapterInfo)).toBe(4);
  });

  it('picks the tiled, register-blocked variant 3 on a named real GPU or when there is no adapter info', () => {
    const h200 = {
      vendor: 'nvidia',
      architecture: 'hopper',
      device: 'nvidia-h200',
      description: '',
      isFallbackAdapter: false,
    };
    expect(defaultMatmulVariant(h200 as unknown as GPUAdapterInfo)).toBe(3);
    expect(defaultMatmulVariant(undefined)).toBe(3);
  });
});

describe('createGpuKernels', () => {
  it('uploads from and downloads into SharedArrayBuffer views at an element offset', async () => {
    expect(crossOriginIsolated, 'COOP/COEP headers').toBe(true);
    const src = new Float32Array(new SharedArrayBuffer(4 * 6)).map((_, i) => i + 1);
    const t = k.create('sab', 8, 'f32');
    k.upload(t, src.subarray(2, 5), 3); // [3,4,5] at elements 3..5
    const out = new Float32Array(new SharedArrayBuffer(4 * 8));
    await k.download(t, out);
    expect(Array.from(out)).toEqual([0, 0, 0, 3, 4, 5, 0, 0]);
    k.release(t);
  });

  it('reads a bucket back in one downloadAll: every part where a download would put it, twice over a reused staging buffer', async () => {
    const sizes = [5, 1, 130, 64];
    const ts = sizes.map((n, i) => {
      const t = k.create(`part${i}`, n, 'f32');
      k.upload(
        t,
        Float32Array.from({ length: n }, (_, j) => 1000 * i + j),
      );
      return t;
    });
    for (const round of [0, 1]) {
      const host = new Float32Array(new SharedArrayBuffer(4 * 201)).fill(-1); // the parts take 200
      let at = 0;
      const parts = ts.map((t) => ({ t, into: host.subarray(at, (at += t.length)) }));
      await k.downloadAll(parts);
      for (const [i, { t, into }] of parts.entries()) {
        const one = new Float32Array(t.length);
        await k.download(t, one);
        expect(Array.from(into), `round ${round} part ${i}`).toEqual(Array.from(one));
        expect(into[into.length - 1]).toBe(1000 * i + t.length - 1);
      }
      expect(host[at]).toBe(-1); // nothing written past the last part
    }
    for (const t of ts) k.release(t);
  });

  it('uploadScatter writes each slice of one host array where upload() would, and rejects a slice that does not fit', async () => {
    const a = k.create('scatter a', 6, 'f32'),
      b = k.create('scatter b', 3, 'f32');
    k.upload(a, Float32Array.from([9, 9, 9, 9, 9, 9]));
    const src = new Float32Array(new SharedArrayBuffer(4 * 8)).map((_, i) => i + 1);
    k.uploadScatter(src, [
      { t: a, from: 0, length: 2, at: 4 },
      { t: b, from: 5, length: 3, at: 0 },
      { t: a, from: 2, length: 1, at: 0 },
    ]);
    const out = new Float32Array(9);
    await k.downloadAll([
      { t: a, into: out.subarray(0, 6) },
      { t: b, into: out.subarray(6) },
    ]);
    expect(Array.from(out)).toEqual([3, 9, 9, 9, 1, 2, 6, 7, 8]);
    expect(() => k.uploadScatter(src, [{ t: b, from: 6, length: 3, at: 0 }])).toThrow(/does not fit/);
    k.release(a);
    k.release(b);
  });

  it('warm() compiles every pipeline run() needs, so the first run compiles nothing', async () => {
    const other = await requestKernelDevice({ featureLevel: level });
    const w = createGpuKernels(other.device);
    try {
      await w.warm?.();
      const before = w.compileMs ?? 0;
      const a = w.create('a', 4, 'f32'),
        b = w.create('b', 4, 'f32'),
        c = w.create('c', 4, 'f32');
      w.run('matmul', { M: 2, N: 2, K: 2, transA: false, transB: false }, [a, b], [c]);
      w.run('add', { n: 4 }, [a, b], [c]);
      await w.sync();
      expect(w.compileMs).toBe(before);
    } finally {
      w.destroy();
      other.device.destroy();
    }
  }, 180_000); // ~20 pipelines at ~1 s each on SwiftShader

  it('hands out zeroed tensors even when the pool reuses a buffer', async () => {
    const a = k.create('dirty', 5, 'f32');
    k.upload(a, Float32Array.from([1, 2, 3, 4, 5]));
    k.release(a);
    const b = k.create('clean', 5, 'f32');
    const out = new Float32Array(5).fill(7);
    await k.download(b, out);
    expect(Array.from(out)).toEqual([0, 0, 0, 0, 0]);
    k.release(b);
  });

  it('throws a GpuLimitError naming maxStorageBufferBindingSize for a tensor that cannot be bound', () => {
    const max = Math.min(kd.device.limits.maxStorageBufferBindingSize, kd.device.limits.maxBufferSize);
    const huge = Math.floor(max / 4) + 1;
    expect(() => k.create('huge', huge, 'f32')).toThrow(GpuLimitError);
    expect(() => k.create('huge', huge, 'f32')).toThrow(
      /max(StorageBufferBindingSize|BufferSize) is \d+ on this device, tensor 'huge'/,
    );
  });

  it('rejects sync() with a GpuError when WebGPU reports a validation error (aliased output)', async () => {
    const t = k.create('alias', 4, 'f32');
    k.run('add', { n: 4 }, [t, t], [t]); // the same buffer read-only and read-write in one dispatch
    await expect(k.sync()).rejects.toThrow(GpuError);
    await k.sync(); // reported once: the next sync is clean
    k.release(t);
  });

  it('fails loudly with the loss reason once its device is lost', async () => {
    const other = await requestKernelDevice({ featureLevel: level });
    const b = createGpuKernels(other.device);
    other.device.destroy();
    await other.device.lost;
    expect(() => b.create('x', 1, 'f32')).toThrow(/device lost \(destroyed\)/);
  });
});
