// Tests of the CPU causal attention: an independent full-matrix reference (GQA), the causal mask,
// and the backward (dq, dk, dv) by finite differences (fp64).
import { describe, expect, it } from 'vitest';
import { attention, attentionBwd, attentionIndex } from '../../../src/runtime/cpu/attention';
import { expectGradMatches, randn64, rng, weightedSum } from './helpers';

const d = { batch: 2, seq: 4, heads: 4, kvHeads: 2, headDim: 3 };
const T = d.batch * d.seq;

/** Independent reference: full score matrix, −∞ mask, row softmax, P·V; kv heads expanded first. */
function naive(q: Float64Array, k: Float64Array, v: Float64Array): Float64Array {
  const ix = attentionIndex(d);
  const o = new Float64Array(T * d.heads * d.headDim);
  for (let b = 0; b < d.batch; b++)
    for (let h = 0; h < d.heads; h++) {
      const g = Math.floor(h / (d.heads / d.kvHeads)); // torch repeat_interleave grouping
      const S: number[][] = [];
      for (let i = 0; i < d.seq; i++) {
        S.push([]);
        for (let j = 0; j < d.seq; j++) {
          let s = 0;
          for (let t = 0; t < d.headDim; t++) s += q[ix.q(b, i, h) + t] * k[ix.kv(b, j, g) + t];
          S[i].push(j > i ? -Infinity : s / Math.sqrt(d.headDim));
        }
        const mx = Math.max(...S[i]);
        const e = S[i].map((s) => Math.exp(s - mx));
        const z = e.reduce((x, y) => x + y, 0);
        for (let t = 0; t < d.headDim; t++) {
          o[ix.q(b, i, h) + t] = e.reduce((acc, p, j) => acc + (p / z) * v[ix.kv(b, j, g) + t], 0);
        }
      }
    }
  return o;
}

describe('attention', () => {
  it('matches a full-matrix causal softmax reference with GQA grouping', () => {
    const r = rng(6);
    const q = randn64(T * d.heads * d.headDim, r),
      k = randn64(T * d.kvHeads * d.headDim, r);
    const v = randn64(k.length, r);
    const o = new Float64Array(q.length),
      lse = new Float64Array(d.batch * d.heads * d.seq);
    attention(q, k, v, o, lse, d);
    const want = naive(q, k, v);
    for (let i = 0; i < o.length; i++) expect(o[i]).toBeCloseTo(want[i], 12);
  });

  it('makes the first query row copy v of the first key (causal mask)', () => {
    const r = rng(7);
    const q = randn64(T * d.heads * d.headDim, r),
      k = randn64(T * d.kvHeads * d.headDim, r);
    const v = randn64(k.length, r);
    const o = new Float64Array(q.length),
      lse = new Float64Array(d.batch * d.heads * d.seq);
    attention(q, k, v, o, lse, d);
    const ix = attentionIndex(d);
    for (let h = 0; h < d.heads; h++)
      for (let t = 0; t < d.headDim; t++) {
        expect(o[ix.q(1, 0, h) + t]).toBeCloseTo(v[ix.kv(1, 0, ix.kvHead(h)) + t], 14);
      }
  });
});

describe('attentionBwd', () => {
  it('matches finite differences for dq, dk and dv', () => {
    const r = rng(8);
    const q = randn64(T * d.heads * d.headDim, r),
      k = randn64(T * d.kvHeads * d.headDim, r);
    const v = randn64(k.length, r),
      R = randn64(q.length, r);
    const o = new Float64Array(q.length),
      lse = new Float64Array(d.batch * d.heads * d.seq);
    const loss = () => {
      attention(q, k, v, o, lse, d);
      return weightedSum(o, R);
    };
    loss();
    const dq = new Float64Array(q.length),
      dk = new Float64Array(k.length),
      dv = new Float64Array(v.length);
    attentionBwd(R, q, k, v, o, lse, dq, dk, dv, d);
    expectGradMatches('dq', q, dq, loss);
    expectGradMatches('dk', k, dk, loss);
    expectGradMatches('dv', v, dv, loss);
  });
});
