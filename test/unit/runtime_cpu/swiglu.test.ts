// Tests of the CPU SwiGLU gate: the formula, and the backward by finite differences (fp64).
import { describe, expect, it } from 'vitest';
import { swiglu, swigluBwd } from '../../../src/runtime/cpu/swiglu';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

describe('swiglu', () => {
  it('computes silu(a)·b', () => {
    const g = new Float64Array(2);
    swiglu(Float64Array.from([0, 2]), Float64Array.from([5, 3]), g, 2);
    expect(g[0]).toBe(0);
    expect(g[1]).toBeCloseTo((2 / (1 + Math.exp(-2))) * 3, 14);
  });
});

describe('swigluBwd', () => {
  it('matches finite differences for da and db', () => {
    const r = rng(5);
    const n = 11;
    const a = randn64(n, r, 3),
      b = randn64(n, r),
      R = randn64(n, r);
    const g = new Float64Array(n);
    const loss = () => {
      swiglu(a, b, g, n);
      return weightedSum(g, R);
    };
    const da = new Float64Array(n),
      db = new Float64Array(n);
    swigluBwd(R, a, b, da, db, n);
    expectGradMatches('da', a, da, loss);
    expectGradMatches('db', b, db, loss);
  });
});
