// Tests of the CPU grouped GEMM: each expert's row range against the dense matmul of that slice
// (an expert with no rows included), the backward dX and dW against finite differences (fp64),
// and malformed offsets named.
import { describe, expect, it } from 'vitest';
import { groupedMatmul, groupedMatmulBwdW, groupedMatmulBwdX, matmul } from '../../../src/runtime/cpu';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

const E = 3,
  Kf = 4,
  N = 5;
const OFFSETS = Int32Array.from([0, 3, 3, 7]); // expert 1 gets no rows
const P = 7;
const dims = { rows: P, experts: E, K: Kf, N };

describe('groupedMatmul', () => {
  it("multiplies each expert's rows by its own weight, like a dense matmul per slice", () => {
    const r = rng(11);
    const x = randn64(P * Kf, r),
      w = randn64(E * Kf * N, r);
    const y = new Float64Array(P * N);
    groupedMatmul(x, w, OFFSETS, y, dims);
    for (let e = 0; e < E; e++) {
      const M = OFFSETS[e + 1] - OFFSETS[e];
      const want = new Float64Array(M * N);
      matmul(x.subarray(OFFSETS[e] * Kf), w.subarray(e * Kf * N), want, { M, N, K: Kf, transA: false, transB: false });
      want.forEach((v, i) => expect(y[OFFSETS[e] * N + i]).toBeCloseTo(v, 13));
    }
  });

  it('backward dX and dW match finite differences, dW zero for an expert with no rows', () => {
    const r = rng(12);
    const x = randn64(P * Kf, r),
      w = randn64(E * Kf * N, r),
      R = randn64(P * N, r);
    const y = new Float64Array(P * N);
    const loss = () => {
      groupedMatmul(x, w, OFFSETS, y, dims);
      return weightedSum(y, R);
    };
    const dx = new Float64Array(P * Kf),
      dw = new Float64Array(E * Kf * N).fill(Number.NaN);
    groupedMatmulBwdX(R, w, OFFSETS, dx, dims);
    groupedMatmulBwdW(R, x, OFFSETS, dw, dims);
    expectGradMatches('dx', x, dx, loss);
    expectGradMatches('dw', w, dw, loss);
    expect(Array.from(dw.subarray(Kf * N, 2 * Kf * N))).toEqual(new Array(Kf * N).fill(0));
  });

  it('names offsets that do not rise from 0 to the rows', () => {
    const bad = Int32Array.from([0, 4, 2, 7]);
    const x = new Float32Array(P * Kf),
      w = new Float32Array(E * Kf * N);
    expect(() => groupedMatmul(x, w, bad, new Float32Array(P * N), dims)).toThrow(
      'groupedMatmul.offsets must rise from 0 to rows=7 over 4 entries, got [0, 4, 2, 7]',
    );
  });
});
