// sumInRankOrder (the direct reduce-scatter kernel) against an independent rank-order f32 reference:
// every fold path (1, 2, 2+3k, 2+3k+1, 2+3k+2 sources), lengths that straddle the block size, avg.

import { describe, expect, it } from 'vitest';
import { SUM_BLOCK, foldInRankOrder, sumInRankOrder } from '../../../src/runtime/comm/sum_f32';
import { bitsOf, seededF32 } from './harness';

/** ((s0 + s1) + s2) + …, one f32 rounding per addition through a Float32Array store; ÷ d once. */
function reference(sources: readonly Float32Array[], d: number): Float32Array {
  const acc = new Float32Array(sources[0]);
  for (let q = 1; q < sources.length; q++) for (let j = 0; j < acc.length; j++) acc[j] = acc[j] + sources[q][j];
  if (d !== 1) for (let j = 0; j < acc.length; j++) acc[j] = acc[j] / d;
  return acc;
}

describe('sumInRankOrder', () => {
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
    for (const len of [1, 7, SUM_BLOCK, SUM_BLOCK + 3, 3 * SUM_BLOCK - 1]) {
      it(`matches the rank-order f32 sum bit for bit with ${n} sources of ${len} elems (sum and avg)`, () => {
        // Mixed magnitudes so the order of the additions shows in the bits.
        const sources = Array.from({ length: n }, (_, q) =>
          seededF32(len, 1000 * n + 17 * q + len, q % 2 ? 1e4 : 1e-2),
        );
        const sum = new Float32Array(len).fill(Number.NaN);
        sumInRankOrder(sources, sum, 1);
        expect(bitsOf(sum)).toEqual(bitsOf(reference(sources, 1)));
        const avg = new Float32Array(len);
        sumInRankOrder(sources, avg, n);
        expect(bitsOf(avg)).toEqual(bitsOf(reference(sources, n)));
      });
    }
  }

  it('differs from another summation order on a crafted input (the order is really rank order)', () => {
    const sources = [new Float32Array([1]), new Float32Array([1e8]), new Float32Array([-1e8])];
    const out = new Float32Array(1);
    sumInRankOrder(sources, out, 1);
    expect(out[0]).toBe(0); // (1 + 1e8) − 1e8 in f32; 1 + (1e8 − 1e8) would be 1
  });
});

describe('foldInRankOrder', () => {
  for (const n of [2, 3, 5, 8]) {
    it(`gives the one-pass bits when ${n} sources are folded in two parts, split anywhere`, () => {
      const len = SUM_BLOCK + 5;
      const sources = Array.from({ length: n }, (_, q) => seededF32(len, 77 * n + q, q % 2 ? 1e4 : 1e-2));
      const want = reference(sources, n);
      for (let split = 1; split < n; split++) {
        const out = new Float32Array(len).fill(Number.NaN);
        foldInRankOrder(sources, out, 0, split, 1); // the ranks already arrived
        foldInRankOrder(sources, out, split, n, n); // the rest, after the barrier; then ÷ n
        expect(bitsOf(out), `split at ${split}`).toEqual(bitsOf(want));
      }
    });
  }
});
