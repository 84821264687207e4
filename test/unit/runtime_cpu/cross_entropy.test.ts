// Tests of the CPU cross-entropy: log V for uniform logits, overflow safety, backward by finite differences.
import { describe, expect, it } from 'vitest';
import { crossEntropy, crossEntropyBwd } from '../../../src/runtime/cpu/cross_entropy';
import { expectGradMatches, randn64, rng } from './helpers';

describe('crossEntropy', () => {
  it('gives log V for uniform logits', () => {
    const loss = new Float64Array(1);
    crossEntropy(new Float64Array(3 * 8).fill(0.5), Int32Array.from([0, 7, 3]), loss, { T: 3, V: 8 });
    expect(loss[0]).toBeCloseTo(Math.log(8), 14);
  });

  it('stays finite for large logits (max-shifted logsumexp)', () => {
    const loss = new Float64Array(1);
    crossEntropy(Float64Array.from([1000, 0]), Int32Array.from([1]), loss, { T: 1, V: 2 });
    expect(loss[0]).toBeCloseTo(1000, 10);
  });
});

describe('crossEntropyBwd', () => {
  it('matches finite differences of the mean loss', () => {
    const d = { T: 4, V: 6 };
    const logits = randn64(d.T * d.V, rng(9), 3);
    const targets = Int32Array.from([5, 0, 2, 2]);
    const dl = new Float64Array(logits.length);
    crossEntropyBwd(logits, targets, dl, d);
    const loss = new Float64Array(1);
    expectGradMatches('dLogits', logits, dl, () => {
      crossEntropy(logits, targets, loss, d);
      return loss[0];
    });
  });
});
