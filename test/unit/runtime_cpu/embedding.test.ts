// Tests of the CPU embedding gather and its scatter-add backward (finite differences, fp64).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { embedding, embeddingBwd } from '../../../src/runtime/cpu';
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
    expect(() => embedding(new Float64Array(15), Int32Array.from([0, 5, 0, 0, 0, 0]), new Float64Array(18), d))
      .toThrow(ConfigError);
    expect(() => embedding(new Float64Array(15), Int32Array.from([0, 5, 0, 0, 0, 0]), new Float64Array(18), d))
      .toThrow(/tokens\[1\]/);
  });
});

describe('embeddingBwd', () => {
  it('matches finite differences of Σ out·R and leaves unused rows zero', () => {
    const r = rng(3);
    const w = randn64(d.V * d.D, r), R = randn64(d.T * d.D, r);
    const dW = new Float64Array(d.V * d.D).fill(7); // must be overwritten, not accumulated
    embeddingBwd(R, tokens, dW, d);
    const out = new Float64Array(d.T * d.D);
    expectGradMatches('dWeight', w, dW, () => {
      embedding(w, tokens, out, d);
      return weightedSum(out, R);
    });
    for (let j = 0; j < d.D; j++) { expect(dW[1 * d.D + j]).toBe(0); expect(dW[3 * d.D + j]).toBe(0); }
  });
});
