// Test helpers for the CPU kernels: a seeded RNG and a central finite-difference gradient check.
import { expect } from 'vitest';
export { rng } from '../../helpers/rng';

export function randn64(n: number, r: () => number, scale = 1): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = (r() * 2 - 1) * scale;
  return x;
}

/**
 * Checks an analytic gradient against central differences of `loss` w.r.t. `x` (fp64, perturbed
 * in place and restored). Tolerance abs + |num|·rel.
 */
export function expectGradMatches(
  name: string,
  x: Float64Array,
  analytic: ArrayLike<number>,
  loss: () => number,
  h = 1e-6,
  abs = 1e-6,
  rel = 1e-5,
): void {
  const bad: string[] = [];
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i];
    x[i] = x0 + h;
    const lp = loss();
    x[i] = x0 - h;
    const lm = loss();
    x[i] = x0;
    const num = (lp - lm) / (2 * h);
    if (!(Math.abs(num - analytic[i]) <= abs + Math.abs(num) * rel)) {
      bad.push(`${name}[${i}]: numeric ${num}, analytic ${analytic[i]}`);
      if (bad.length >= 5) break;
    }
  }
  expect(bad, bad.join('\n')).toEqual([]);
}

/** Σ out·R: a scalar loss whose gradient w.r.t. out is R. */
export function weightedSum(out: ArrayLike<number>, R: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < out.length; i++) s += out[i] * R[i];
  return s;
}
