// Tests of the CPU MoE router: top-k and gates against a naive sort-and-softmax reference, the
// lower-index tie-break, bad topK named, and the backward against finite differences (fp64).
import { describe, expect, it } from 'vitest';
import { moeRouter, moeRouterBwd } from '../../../src/runtime/cpu';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

/** Naive reference: sort experts by (logit desc, index asc), softmax over all, renormalise the first k. */
function routerRef(logits: Float64Array, T: number, E: number, k: number) {
  const experts: number[] = [];
  const gates: number[] = [];
  for (let t = 0; t < T; t++) {
    const row = Array.from(logits.subarray(t * E, (t + 1) * E));
    const probs = row.map((l) => Math.exp(l));
    const z = probs.reduce((a, b) => a + b, 0);
    const order = row
      .map((_, e) => e)
      .sort((a, b) => row[b] - row[a] || a - b)
      .slice(0, k);
    const kept = order.reduce((s, e) => s + probs[e] / z, 0);
    experts.push(...order);
    gates.push(...order.map((e) => probs[e] / z / kept));
  }
  return { experts, gates };
}

describe('moeRouter', () => {
  it('picks the top-k experts in descending order with renormalised gates, like sort + softmax', () => {
    const T = 9,
      E = 6,
      k = 3;
    const logits = randn64(T * E, rng(1), 4);
    const gates = new Float64Array(T * k),
      experts = new Int32Array(T * k);
    moeRouter(logits, gates, experts, { tokens: T, experts: E, topK: k });
    const ref = routerRef(logits, T, E, k);
    expect(Array.from(experts)).toEqual(ref.experts);
    ref.gates.forEach((g, i) => expect(gates[i]).toBeCloseTo(g, 12));
    for (let t = 0; t < T; t++) expect(gates[t * k] + gates[t * k + 1] + gates[t * k + 2]).toBeCloseTo(1, 12);
  });

  it('breaks ties by the lower expert index', () => {
    const gates = new Float32Array(4),
      experts = new Int32Array(4);
    moeRouter(Float32Array.from([0, 2, 2, 2, 5, 1, 5, 1]), gates, experts, { tokens: 2, experts: 4, topK: 2 });
    expect(Array.from(experts)).toEqual([1, 2, 0, 2]);
    expect(Array.from(gates)).toEqual([0.5, 0.5, 0.5, 0.5]);
  });

  it('names topK and its allowed range when it exceeds the experts', () => {
    const dims = { tokens: 1, experts: 4, topK: 5 };
    expect(() => moeRouter(new Float32Array(4), new Float32Array(5), new Int32Array(5), dims)).toThrow(
      'router.topK must be an integer in [1, experts=4], got 5',
    );
  });
});

describe('moeRouterBwd', () => {
  it('matches finite differences of Σ R·gates w.r.t. the logits (no near-ties)', () => {
    const T = 5,
      E = 5,
      k = 2;
    const r = rng(7);
    const logits = Float64Array.from({ length: T * E }, (_, i) => (i % E) * 0.7 + r() * 0.3); // picks stay put under h
    const R = randn64(T * k, r);
    const gates = new Float64Array(T * k),
      experts = new Int32Array(T * k);
    const dims = { tokens: T, experts: E, topK: k };
    const loss = () => {
      moeRouter(logits, gates, experts, dims);
      return weightedSum(gates, R);
    };
    loss();
    const dLogits = new Float64Array(T * E).fill(Number.NaN);
    moeRouterBwd(R, gates, experts, dLogits, dims);
    expectGradMatches('dLogits', logits, dLogits, loss);
  });
});
