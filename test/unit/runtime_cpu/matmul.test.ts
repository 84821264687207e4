// Tests of the CPU reference matmul: a hand-worked product, and every trans form vs explicit transposes.
import { describe, expect, it } from 'vitest';
import { matmul } from '../../../src/runtime/cpu';
import { randn64, rng } from './helpers';

function transpose(x: Float64Array, rows: number, cols: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) y[c * rows + r] = x[r * cols + c];
  return y;
}

describe('matmul', () => {
  it('computes a hand-worked 2×3 · 3×2 product', () => {
    const a = Float64Array.from([1, 2, 3, 4, 5, 6]);
    const b = Float64Array.from([7, 8, 9, 10, 11, 12]);
    const c = new Float64Array(4);
    matmul(a, b, c, { M: 2, N: 2, K: 3, transA: false, transB: false });
    expect(Array.from(c)).toEqual([58, 64, 139, 154]);
  });

  it('gives the plain product for every trans form when the operands are stored transposed', () => {
    const r = rng(1);
    const M = 5,
      N = 7,
      K = 3;
    const a = randn64(M * K, r),
      b = randn64(K * N, r);
    const want = new Float64Array(M * N);
    matmul(a, b, want, { M, N, K, transA: false, transB: false });
    for (const [transA, transB] of [
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const c = new Float64Array(M * N);
      matmul(transA ? transpose(a, M, K) : a, transB ? transpose(b, K, N) : b, c, { M, N, K, transA, transB });
      for (let i = 0; i < c.length; i++) expect(c[i]).toBeCloseTo(want[i], 12);
    }
  });
});
