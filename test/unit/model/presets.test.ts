// Model presets, argument validation and the parameter table against published Llama 3 sizes.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { MODEL_NAMES, MODEL_PRESETS, headDim, paramCount, paramTable, validateModelArgs } from '../../../src/model';
import { getModelArgs } from '../../../src/model/presets';

describe('MODEL_PRESETS', () => {
  it('has one entry per model name, tiny first', () => {
    expect(Object.keys(MODEL_PRESETS)).toEqual([...MODEL_NAMES]);
    expect(MODEL_NAMES[0]).toBe('tiny');
  });

  it('keeps tiny and small evenly shardable on 1, 2, 4 and 8 ranks', () => {
    for (const name of ['tiny', 'small'] as const) {
      for (const p of paramTable(MODEL_PRESETS[name])) expect(p.shape[0] % 8, p.name).toBe(0);
    }
  });

  it("matches Meta's Llama 3 shapes", () => {
    expect(MODEL_PRESETS['llama3-8b']).toMatchObject({
      dim: 4096,
      nLayers: 32,
      nHeads: 32,
      nKvHeads: 8,
      ffnDim: 14336,
      vocabSize: 128256,
    });
    expect(MODEL_PRESETS['llama3-70b']).toMatchObject({
      dim: 8192,
      nLayers: 80,
      nHeads: 64,
      nKvHeads: 8,
      ffnDim: 28672,
    });
    expect(MODEL_PRESETS['llama3-405b']).toMatchObject({
      dim: 16384,
      nLayers: 126,
      nHeads: 128,
      nKvHeads: 8,
      ffnDim: 53248,
    });
    for (const a of Object.values(MODEL_PRESETS)) {
      expect(a.dim % a.nHeads).toBe(0);
      expect(a.nHeads % a.nKvHeads).toBe(0);
      expect(() => validateModelArgs(a)).not.toThrow();
    }
  });
});

describe('getModelArgs', () => {
  it('returns the preset for a known name', () => {
    expect(getModelArgs('llama3-8b')).toBe(MODEL_PRESETS['llama3-8b']);
  });

  it('throws a ConfigError listing the valid names for an unknown one', () => {
    try {
      getModelArgs('llama3-7b');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe('model');
      for (const n of MODEL_NAMES) expect((e as Error).message).toContain(n);
      expect((e as Error).message).toContain('llama3-7b');
    }
  });
});

describe('paramTable', () => {
  it('lists torchtitan FQNs in module order with [out, in] shapes', () => {
    const a = MODEL_PRESETS.tiny;
    const t = paramTable(a);
    expect(t.length).toBe(2 + 9 * a.nLayers + 1);
    expect(t.slice(0, 10).map((p) => `${p.name} ${p.shape.join('x')}`)).toEqual([
      'tok_embeddings.weight 256x64',
      'layers.0.attention_norm.weight 64',
      'layers.0.attention.wq.weight 64x64',
      'layers.0.attention.wk.weight 64x64',
      'layers.0.attention.wv.weight 64x64',
      'layers.0.attention.wo.weight 64x64',
      'layers.0.ffn_norm.weight 64',
      'layers.0.feed_forward.w1.weight 192x64',
      'layers.0.feed_forward.w2.weight 64x192',
      'layers.0.feed_forward.w3.weight 192x64',
    ]);
    expect(t.slice(-2).map((p) => p.name)).toEqual(['norm.weight', 'output.weight']);
    expect(t.find((p) => p.name === 'layers.1.ffn_norm.weight')?.layer).toBe(1);
    expect(t[0].layer).toBeUndefined();
  });

  it('gives GQA key/value projections nKvHeads·headDim rows', () => {
    const a = MODEL_PRESETS['llama3-8b'];
    const wk = paramTable(a).find((p) => p.name === 'layers.0.attention.wk.weight');
    expect(headDim(a)).toBe(128);
    expect(wk?.shape).toEqual([1024, 4096]);
  });

  // Published totals: Llama 3 model card / paper (8.03B, 70.55B, 405.85B parameters).
  it.each([
    ['llama3-8b', 8.03e9, 0.005],
    ['llama3-70b', 70.55e9, 0.002],
    ['llama3-405b', 405.85e9, 0.001],
  ] as const)('counts %s at its published size', (name, published, tol) => {
    const n = paramCount(MODEL_PRESETS[name]);
    expect(Math.abs(n - published) / published).toBeLessThan(tol);
  });

  it('counts llama3-8b exactly by the closed form', () => {
    const [D, L, V, F, kv] = [4096, 32, 128256, 14336, 1024];
    const perLayer = 2 * D * D + 2 * kv * D + 3 * F * D + 2 * D;
    expect(paramCount(MODEL_PRESETS['llama3-8b'])).toBe(2 * V * D + L * perLayer + D);
  });
});

describe('validateModelArgs', () => {
  const base = MODEL_PRESETS.tiny;
  it.each([
    [{ ...base, dim: 0 }, 'model.dim'],
    [{ ...base, nHeads: 3.5 }, 'model.nHeads'],
    [{ ...base, nHeads: 5 }, 'model.nHeads'], // 64 % 5
    [{ ...base, nKvHeads: 3 }, 'model.nKvHeads'], // 4 % 3
    [{ ...base, normEps: 0 }, 'model.normEps'],
    [{ ...base, vocabSize: '256' }, 'model.vocabSize'],
    [{ ...base, rope: 1 }, 'model.rope'],
  ])('rejects a bad field (%#) naming it', (args, field) => {
    try {
      validateModelArgs(args);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe(field);
    }
  });

  it('rejects a non-object', () => {
    expect(() => validateModelArgs(null)).toThrow(ConfigError);
    expect(() => validateModelArgs([1])).toThrow(ConfigError);
  });
});
