// Seeded parameter init: shards of any world size reassemble to the same full parameter.
import { describe, expect, it } from 'vitest';
import type { ParamInfo } from '../../../src/graph/types';
import { fnv1aHex, initFullParam, shardOf, splitmix32, unshard } from '../../../src/runtime/init';

const param = (name: string, shape: number[], n: number): ParamInfo => ({
  name,
  shape,
  numel: shape.reduce((a, b) => a * b, 1),
  shardRows: Math.ceil(shape[0] / n),
});

describe('initFullParam', () => {
  it('is deterministic per (seed, name) and differs across names and seeds', () => {
    const p = param('layers.0.attention.wq.weight', [8, 4], 1);
    const q = param('layers.0.attention.wk.weight', [8, 4], 1);
    expect(initFullParam(p, 7)).toEqual(initFullParam(p, 7));
    expect(initFullParam(p, 7)).not.toEqual(initFullParam(p, 8));
    expect(initFullParam(p, 7)).not.toEqual(initFullParam(q, 7));
  });

  it('draws normal(0, 0.02) weights and sets RMSNorm weights to one', () => {
    const w = initFullParam(param('tok_embeddings.weight', [256, 64], 1), 1);
    const mean = w.reduce((a, b) => a + b, 0) / w.length;
    const std = Math.sqrt(w.reduce((a, b) => a + (b - mean) ** 2, 0) / w.length);
    expect(Math.abs(mean)).toBeLessThan(0.002);
    expect(std).toBeGreaterThan(0.019);
    expect(std).toBeLessThan(0.021);
    expect([...initFullParam(param('layers.1.ffn_norm.weight', [64], 1), 1)].every((x) => x === 1)).toBe(true);
  });
});

describe('shardOf', () => {
  it('gives rank r rows [r·shardRows, (r+1)·shardRows) so N shards reassemble the 1-rank parameter', () => {
    for (const n of [1, 2, 4, 8]) {
      const p = param('output.weight', [16, 3], n);
      const full = initFullParam(p, 3);
      const shards = Array.from({ length: n }, (_, r) => shardOf(full, p, r));
      expect(shards[n - 1].length).toBe((16 / n) * 3);
      expect(shards[1 % n].subarray(0, 3)).toEqual(full.subarray((1 % n) * (16 / n) * 3, (1 % n) * (16 / n) * 3 + 3));
      expect(unshard(shards, p)).toEqual(full);
    }
  });

  it('zero-pads the last shard when rows do not divide evenly', () => {
    const p = param('w', [5, 2], 4); // shardRows 2: ranks hold rows 0-1, 2-3, 4+pad, pad
    const full = initFullParam(p, 1);
    expect([...shardOf(full, p, 2)]).toEqual([full[8], full[9], 0, 0]);
    expect([...shardOf(full, p, 3)]).toEqual([0, 0, 0, 0]);
    expect(
      unshard(
        [0, 1, 2, 3].map((r) => shardOf(full, p, r)),
        p,
      ),
    ).toEqual(full);
  });
});

describe('splitmix32', () => {
  it('produces uniform [0, 1) values with a mean near 1/2', () => {
    const u = splitmix32(42);
    let s = 0;
    for (let i = 0; i < 10000; i++) {
      const x = u();
      expect(x >= 0 && x < 1).toBe(true);
      s += x;
    }
    expect(Math.abs(s / 10000 - 0.5)).toBeLessThan(0.02);
  });
});

describe('fnv1aHex', () => {
  it('matches the FNV-1a 32 reference value and changes with one bit', () => {
    // FNV-1a 32 of the empty input is the offset basis; of the 4 bytes of 0.0f it is 0x4b95f515.
    expect(fnv1aHex([])).toBe('811c9dc5');
    expect(fnv1aHex([new Float32Array([0])])).toBe('4b95f515');
    expect(fnv1aHex([new Float32Array([1])])).not.toBe(fnv1aHex([new Float32Array([1 + 2 ** -23])]));
  });
});
