// Tests of the CPU embedding gather and its scatter-add backward (finite differences, fp64).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { embedding, embeddingBwd } from '../../../src/runtime/cpu/embedding';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

const d = { V: 5, D: 3, T: 6 };
const tokens = Int32Array.from([4, 0, 4, 2, 2, 4]);

describe('embedding', () => {
  it('gathers the weight row of each token', () => {
    const w = randn64(d.V * d.D, rng(2));
    const out = new Float64Array(d.T * d.D);
    embedding(w, tokens, out, d);
    for (let t = 0; t < d.T; t++) for (let j = 0; j < d.D; j++) expect(out[t * d.D + j]).toBe(w[tokens[t] * d.D + j]);
  });

  it('throws a ConfigError naming the token when an id is out of range', () => {
    expect(() => embedding(new Float64Array(15), Int32Array.from([0, 5, 0, 0, 0, 0]), new Float64Array(18), d)).toThrow(
      ConfigError,
    );
    expect(() => embedding(new Float64Array(15), Int32Array.from([0, 5, 0, 0, 0, 0]), new Float64Array(18), d)).toThrow(
      /tokens\[1\]/,
    );
  });
});

describe('embeddingBwd', () => {
  it('matches finite differences of Σ out·R and leaves unused rows zero', () => {
    const r = rng(3);
    const w = randn64(d.V * d.D, r),
      R = randn64(d.T * d.D, r);
    const dW = new Float64Array(d.V * d.D).fill(7); // must be overwritten, not accumulated
    embeddingBwd(R, tokens, dW, d);
    const out = new Float64Array(d.T * d.D);
    expectGradMatches('dWeight', w, dW, () => {
      embedding(w, tokens, out, d);
      return weightedSum(out, R);
    });
    for (let j = 0; j < d.D; j++) {
      expect(dW[1 * d.D + j]).toBe(0);
      expect(dW[3 * d.D + j]).toBe(0);
    }
  });
});

describe('vocabulary-sharded embedding (TP: the table holds ids [vocabStart, vocabStart + V))', () => {
  it("sums to the full table's output and gradient over the shards", () => {
    const r = rng(4);
    const full = { V: 6, D: 3, T: 6 };
    const ids = Int32Array.from([5, 0, 3, 2, 2, 4]);
    const w = randn64(full.V * full.D, r);
    const dOut = randn64(full.T * full.D, r);
    const want = new Float64Array(full.T * full.D);
    embedding(w, ids, want, full);
    const wantGrad = new Float64Array(full.V * full.D);
    embeddingBwd(dOut, ids, wantGrad, full);
    const sum = new Float64Array(full.T * full.D);
    for (const start of [0, 3]) {
      const shard = { V: 3, D: 3, T: 6, vocabStart: start };
      const out = new Float64Array(full.T * full.D);
      embedding(w.subarray(start * 3, (start + 3) * 3), ids, out, shard);
      out.forEach((x, i) => (sum[i] += x)); // one shard holds each id: the others add zeros
      const grad = new Float64Array(shard.V * shard.D);
      embeddingBwd(dOut, ids, grad, shard);
      expect([...grad]).toEqual([...wantGrad.subarray(start * 3, (start + 3) * 3)]);
    }
    expect([...sum]).toEqual([...want]);
  });
});
