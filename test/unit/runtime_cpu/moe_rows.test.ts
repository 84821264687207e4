// Tests of the CPU MoE row kernels and index building: the expert order is a stable sort whose two
// indices invert each other; gatherRows against a naive gather; combineRows without weights equals
// a naive scatter-add of the gathered rows; combineRows' backward against finite differences (fp64);
// the regrouping of all-to-all rows by expert against a naive loop.
import { describe, expect, it } from 'vitest';
import { combineRows, combineRowsBwd, expertOrder, gatherRows, sourceToExpertMajor } from '../../../src/runtime/cpu';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

const T = 7,
  K = 2,
  E = 4,
  D = 3;
/** Token picks [T, k], distinct per token; expert 3 gets none. */
const PICKS = Int32Array.from([2, 0, 0, 1, 1, 2, 2, 1, 0, 2, 1, 0, 2, 0]);

describe('expertOrder', () => {
  it('sorts assignments by expert, keeping token order, with rowOf and posOf consistent', () => {
    const o = expertOrder(PICKS, T, K, E);
    expect(Array.from(o.counts)).toEqual([5, 4, 5, 0]);
    expect(Array.from(o.offsets)).toEqual([0, 5, 9, 14, 14]);
    for (let a = 0; a < T * K; a++) {
      expect(o.rowOf[o.posOf[a]]).toBe(Math.floor(a / K));
      const e = PICKS[a];
      expect(o.posOf[a]).toBeGreaterThanOrEqual(o.offsets[e]);
      expect(o.posOf[a]).toBeLessThan(o.offsets[e + 1]);
    }
    for (let e = 0; e < E; e++) {
      const rows = Array.from(o.rowOf.subarray(o.offsets[e], o.offsets[e + 1]));
      expect(rows).toEqual([...rows].sort((a, b) => a - b)); // stable: token order within an expert
    }
  });

  it('names the assignment whose expert is out of range', () => {
    expect(() => expertOrder(Int32Array.from([0, 4]), 1, 2, 4)).toThrow(
      'expertOrder.experts[1] must be in [0, 4), got 4',
    );
  });
});

describe('gatherRows and combineRows', () => {
  const o = expertOrder(PICKS, T, K, E);
  const x = randn64(T * D, rng(3));

  it('gathers each expert row from its token', () => {
    const got = new Float64Array(T * K * D);
    gatherRows(x, o.rowOf, got, { rows: T * K, cols: D, srcRows: T });
    for (let p = 0; p < T * K; p++) for (let j = 0; j < D; j++) expect(got[p * D + j]).toBe(x[o.rowOf[p] * D + j]);
  });

  it("without weights sums each token's rows back: a scatter-add, the gather's backward", () => {
    const src = randn64(T * K * D, rng(4));
    const want = new Float64Array(T * D);
    for (let p = 0; p < T * K; p++) for (let j = 0; j < D; j++) want[o.rowOf[p] * D + j] += src[p * D + j];
    const got = new Float64Array(T * D);
    combineRows(src, o.posOf, null, got, { tokens: T, topK: K, cols: D, srcRows: T * K });
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 14));
  });

  it('combineRowsBwd matches finite differences for the rows and the weights', () => {
    const r = rng(5);
    const src = randn64(T * K * D, r),
      w = randn64(T * K, r),
      R = randn64(T * D, r);
    const dims = { tokens: T, topK: K, cols: D, srcRows: T * K };
    const y = new Float64Array(T * D);
    const loss = () => {
      combineRows(src, o.posOf, w, y, dims);
      return weightedSum(y, R);
    };
    const dSrc = new Float64Array(T * K * D),
      dW = new Float64Array(T * K);
    combineRowsBwd(R, src, o.posOf, w, dSrc, dW, dims);
    expectGradMatches('dSrc', src, dSrc, loss);
    expectGradMatches('dWeights', w, dW, loss);
  });
});

describe('sourceToExpertMajor', () => {
  it('regroups source-major rows expert-major, source order kept, and back inverts it', () => {
    const counts = Int32Array.from([2, 0, 1, 3, 1, 2]); // 3 sources × 2 local experts
    const { index, back, expertCounts } = sourceToExpertMajor(counts, 3, 2);
    // received: s0e0 [0,1], s0e1 [], s1e0 [2], s1e1 [3,4,5], s2e0 [6], s2e1 [7,8]
    expect(Array.from(index)).toEqual([0, 1, 2, 6, 3, 4, 5, 7, 8]);
    expect(Array.from(expertCounts)).toEqual([4, 5]);
    index.forEach((r, i) => expect(back[r]).toBe(i));
  });
});
