// Tests of the CPU AdamW against hand-derived one-step formulas (torch.optim.AdamW semantics).
import { describe, expect, it } from 'vitest';
import { adamw } from '../../../src/runtime/cpu/adamw';

const h = { n: 3, lr: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };

describe('adamw', () => {
  it('takes a sign-like step of size lr at step 1 from zero moments (bias-corrected)', () => {
    const p = Float64Array.from([1, -2, 0.5]),
      g = Float64Array.from([0.3, -4, 0]);
    const m = new Float64Array(3),
      v = new Float64Array(3);
    const pO = new Float64Array(3),
      mO = new Float64Array(3),
      vO = new Float64Array(3);
    adamw(p, g, m, v, pO, mO, vO, h, 1);
    // m̂ = g, v̂ = g²  ⇒  p' = p − lr·(g/(|g| + eps) + wd·p)
    for (let i = 0; i < 3; i++) {
      const sign = g[i] === 0 ? 0 : g[i] / (Math.abs(g[i]) + h.eps);
      expect(pO[i]).toBeCloseTo(p[i] - h.lr * (sign + h.weightDecay * p[i]), 14);
      expect(mO[i]).toBeCloseTo(0.1 * g[i], 14);
      expect(vO[i]).toBeCloseTo(0.05 * g[i] * g[i], 14);
    }
  });

  it('uses the 1-based step in the bias corrections', () => {
    const p = Float64Array.from([1]),
      g = Float64Array.from([0.5]);
    const m = Float64Array.from([0.2]),
      v = Float64Array.from([0.04]);
    const one = { ...h, n: 1, weightDecay: 0 };
    const pO = new Float64Array(1),
      mO = new Float64Array(1),
      vO = new Float64Array(1);
    adamw(p, g, m, v, pO, mO, vO, one, 3);
    const m1 = 0.9 * 0.2 + 0.1 * 0.5; // 0.23
    const v1 = 0.95 * 0.04 + 0.05 * 0.25; // 0.0505
    const want = 1 - (0.01 * (m1 / (1 - 0.9 ** 3))) / (Math.sqrt(v1 / (1 - 0.95 ** 3)) + 1e-8);
    expect(pO[0]).toBeCloseTo(want, 14);
  });
});
