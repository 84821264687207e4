// Tests of the CPU RMSNorm: a hand-worked row, and the backward by finite differences (fp64).
import { describe, expect, it } from 'vitest';
import { rmsNorm, rmsNormBwd } from '../../../src/runtime/cpu/rms_norm';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

describe('rmsNorm', () => {
  it('normalizes a row to unit root-mean-square before scaling by w', () => {
    const x = Float64Array.from([3, 4]); // mean(x²) = 12.5
    const w = Float64Array.from([1, 2]);
    const y = new Float64Array(2),
      rstd = new Float64Array(1);
    rmsNorm(x, w, y, rstd, { rows: 1, cols: 2, eps: 0 });
    expect(rstd[0]).toBeCloseTo(1 / Math.sqrt(12.5), 14);
    expect(y[0]).toBeCloseTo(3 / Math.sqrt(12.5), 14);
    expect(y[1]).toBeCloseTo(8 / Math.sqrt(12.5), 14);
  });
});

describe('rmsNormBwd', () => {
  it('matches finite differences for dx and dw', () => {
    const r = rng(4);
    const d = { rows: 3, cols: 7, eps: 1e-5 };
    const x = randn64(d.rows * d.cols, r),
      w = randn64(d.cols, r),
      R = randn64(d.rows * d.cols, r);
    const y = new Float64Array(x.length),
      rstd = new Float64Array(d.rows);
    const loss = () => {
      rmsNorm(x, w, y, rstd, d);
      return weightedSum(y, R);
    };
    loss();
    const dx = new Float64Array(x.length),
      dw = new Float64Array(d.cols);
    rmsNormBwd(R, x, w, rstd, dx, dw, d);
    expectGradMatches('dx', x, dx, loss);
    expectGradMatches('dw', w, dw, loss);
  });
});
