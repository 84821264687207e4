// Tests of createCpuKernels through the KernelBackend interface: data flow, validation errors.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { COMPUTE_OPS, MOE_OPS } from '../../../src/graph/ops';
import { createCpuKernels } from '../../../src/runtime/cpu';
import { expectedLengths } from '../../../src/runtime/cpu/attrs';

describe('createCpuKernels', () => {
  it('runs a matmul through the KernelBackend interface and downloads the result', async () => {
    const k = createCpuKernels();
    const a = k.create('a', 4, 'f32'),
      b = k.create('b', 4, 'f32'),
      c = k.create('c', 4, 'f32');
    k.upload(a, Float32Array.from([1, 2, 3, 4]));
    k.upload(b, Float32Array.from([1, 0, 0, 1]));
    k.run('matmul', { M: 2, N: 2, K: 2, transA: true, transB: false }, [a, b], [c]);
    expect(await k.sync()).toBeUndefined();
    const out = new Float32Array(4);
    await k.download(c, out);
    expect(Array.from(out)).toEqual([1, 3, 2, 4]);
  });

  it('copies n elements for the copy op (a layout copy: same values, its own buffer)', async () => {
    const k = createCpuKernels();
    const x = k.create('x', 5, 'f32'),
      y = k.create('y', 5, 'f32');
    k.upload(x, Float32Array.from([1, -2, 3.5, 4, 5]));
    k.upload(y, new Float32Array(5).fill(9));
    k.run('copy', { n: 4 }, [x], [y]);
    const out = new Float32Array(5);
    await k.download(y, out);
    expect(Array.from(out)).toEqual([1, -2, 3.5, 4, 9]);
  });

  it('downloadAll copies every part, each into its own (possibly shorter) host view', async () => {
    const k = createCpuKernels();
    const a = k.create('a', 3, 'f32'),
      b = k.create('b', 2, 'i32');
    k.upload(a, Float32Array.from([1, 2, 3]));
    k.upload(b, Int32Array.from([7, 8]));
    const host = new Float32Array(5).fill(-1);
    const ids = new Int32Array(2);
    await k.downloadAll([
      { t: a, into: host.subarray(0, 2) },
      { t: b, into: ids },
    ]);
    expect(Array.from(host)).toEqual([1, 2, -1, -1, -1]); // only the view's 2 elements
    expect(Array.from(ids)).toEqual([7, 8]);
  });

  it('uploadScatter puts each slice of one host array at its offset in its tensor', async () => {
    const k = createCpuKernels();
    const a = k.create('a', 4, 'f32'),
      b = k.create('b', 2, 'f32');
    k.uploadScatter(Float32Array.from([1, 2, 3, 4, 5]), [
      { t: a, from: 1, length: 2, at: 2 },
      { t: b, from: 4, length: 1, at: 1 },
      { t: a, from: 0, length: 1, at: 0 },
    ]);
    const out = new Float32Array(6);
    await k.downloadAll([
      { t: a, into: out.subarray(0, 4) },
      { t: b, into: out.subarray(4) },
    ]);
    expect(Array.from(out)).toEqual([1, 0, 2, 3, 0, 5]);
    expect(() => k.uploadScatter(new Float32Array(3), [{ t: b, from: 0, length: 3, at: 0 }])).toThrow(
      /overflows its 2 elements/,
    );
  });

  it('throws a ConfigError naming the slot and lengths when an input is too short', () => {
    const k = createCpuKernels();
    const a = k.create('x', 3, 'f32'),
      b = k.create('y', 4, 'f32'),
      c = k.create('z', 4, 'f32');
    expect(() => k.run('add', { n: 4 }, [a, b], [c])).toThrow(ConfigError);
    expect(() => k.run('add', { n: 4 }, [a, b], [c])).toThrow(/inputs\[0\] 'x' needs ≥ 4 elements, got 3/);
  });

  it('throws a ConfigError when token ids come in an f32 tensor', () => {
    const k = createCpuKernels();
    const w = k.create('w', 6, 'f32'),
      tok = k.create('tok', 2, 'f32'),
      out = k.create('out', 4, 'f32');
    expect(() => k.run('embedding', { V: 3, D: 2, T: 2 }, [w, tok], [out])).toThrow(
      /inputs\[1\] 'tok' must be i32, got f32/,
    );
  });

  it('requires a 1-based step for adamw', () => {
    const k = createCpuKernels();
    const t = () => k.create('t', 2, 'f32');
    const attrs = { n: 2, lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 };
    expect(() => k.run('adamw', attrs, [t(), t(), t(), t()], [t(), t(), t()], 0)).toThrow(/adamw.step/);
  });

  it('knows the tensor lengths of every compute op', () => {
    const attrs = {
      V: 5,
      D: 3,
      T: 2,
      M: 2,
      N: 3,
      K: 4,
      rows: 2,
      cols: 3,
      n: 4,
      batch: 1,
      seq: 2,
      heads: 2,
      kvHeads: 1,
      headDim: 2,
      lr: 1,
      beta1: 0.9,
      beta2: 0.9,
      eps: 1e-8,
    };
    const moe: readonly string[] = MOE_OPS;
    for (const op of COMPUTE_OPS.filter((o) => !moe.includes(o)))
      expect(expectedLengths(op, attrs).inputs.length).toBeGreaterThan(0);
  });

  it("refuses the graph's MoE ops, which the executor's MoE runner plans into kernels, naming the op", () => {
    for (const op of MOE_OPS)
      expect(() => expectedLengths(op, {})).toThrow(`the MoE op ${op} is planned by the executor's MoE runner`);
  });
});
