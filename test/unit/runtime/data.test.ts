// Synthetic progressions: deterministic, rank slices of one global batch, learnable structure.
import { describe, expect, it } from 'vitest';
import { batchRows, rankBatch } from '../../../src/runtime/data';

const cfg = { vocab: 256, seqLen: 16, globalBatch: 8, seed: 5, noise: 0 };

describe('rankBatch', () => {
  it('splits the global batch by rows: concatenating N ranks gives the 1-rank batch', () => {
    const global = rankBatch(cfg, 3, 0, 1);
    for (const n of [2, 4, 8]) {
      const parts = Array.from({ length: n }, (_, r) => rankBatch(cfg, 3, r, n));
      const tokens = parts.flatMap((p) => [...p.tokens]);
      expect(tokens).toEqual([...global.tokens]);
      expect(parts.flatMap((p) => [...p.targets])).toEqual([...global.targets]);
    }
  });

  it('throws naming globalBatch when it does not divide by the ranks', () => {
    expect(() => rankBatch({ ...cfg, globalBatch: 6 }, 1, 0, 4)).toThrow(/globalBatch/);
  });
});

describe('batchRows', () => {
  it('is deterministic per (seed, step) and differs across steps', () => {
    expect(batchRows(cfg, 1, 0, 8)).toEqual(batchRows(cfg, 1, 0, 8));
    expect(batchRows(cfg, 1, 0, 8).tokens).not.toEqual(batchRows(cfg, 2, 0, 8).tokens);
  });

  it('makes targets the next token of an arithmetic progression without noise', () => {
    const { tokens, targets } = batchRows({ ...cfg, alphabet: 64 }, 1, 0, 8);
    for (let b = 0; b < 8; b++) {
      const row = tokens.subarray(b * 16, b * 16 + 16);
      const k = (targets[b * 16] - row[0] + 64) % 64;
      expect(k >= 1 && k <= 4).toBe(true);
      for (let t = 0; t < 16; t++) {
        expect(targets[b * 16 + t]).toBe((row[t] + k) % 64);
        if (t > 0) expect(row[t]).toBe(targets[b * 16 + t - 1]);
        expect(row[t]).toBeLessThan(64);
      }
    }
  });
});
