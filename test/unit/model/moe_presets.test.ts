// The DeepSeek-V3 / MoE presets against torchtitan's configs and DeepSeek's published sizes,
// and the validation of their `moe` / `mla` args.
import { describe, expect, it } from 'vitest';
import type { ConfigError } from '../../../src/errors';
import { MODEL_PRESETS, paramCount, paramTable, validateModelArgs } from '../../../src/model';
import { activeParamCount } from '../../../src/model/param_table';

describe('DeepSeek-V3 presets', () => {
  it('dsv3-671b has the 671B total and 37B activated parameters of arXiv 2412.19437 (MTP aside)', () => {
    const a = MODEL_PRESETS['dsv3-671b'];
    expect(Math.abs(paramCount(a) / 671e9 - 1)).toBeLessThan(0.005);
    expect(Math.abs(activeParamCount(a) / 37e9 - 1)).toBeLessThan(0.02);
  });

  it("counts one dsv3-16b MoE block by hand from torchtitan's 16B config", () => {
    // dim 2048, 16 heads, kv_lora 512, qk nope 128 + rope 64, v 128, 64 experts of hidden 1408, 2 shared
    const D = 2048;
    const attention = 16 * 192 * D + (512 + 64) * D + 512 + 16 * (128 + 128) * 512 + D * 16 * 128;
    const experts = 64 * 3 * 1408 * D;
    const router = 64 * D;
    const shared = 3 * 2 * 1408 * D;
    const norms = 2 * D;
    const block = paramTable(MODEL_PRESETS['dsv3-16b']).filter((p) => p.layer === 1);
    expect(block.reduce((s, p) => s + p.numel, 0)).toBe(attention + experts + router + shared + norms);
    expect(block.filter((p) => p.expert).map((p) => p.name)).toEqual([
      'layers.1.moe.routed_experts.inner_experts.w1_EFD',
      'layers.1.moe.routed_experts.inner_experts.w2_EDF',
      'layers.1.moe.routed_experts.inner_experts.w3_EFD',
    ]);
  });

  it('keeps the first nDenseLayers blocks dense', () => {
    const names = paramTable(MODEL_PRESETS['dsv3-671b']).map((p) => p.name);
    expect(names).toContain('layers.2.feed_forward.w1.weight');
    expect(names).not.toContain('layers.2.moe.router.gate.weight');
    expect(names).toContain('layers.3.moe.router.gate.weight');
    expect(names).toContain('layers.3.attention.wq_a.weight'); // 671B has a query LoRA
    expect(paramTable(MODEL_PRESETS['dsv3-16b']).map((p) => p.name)).toContain('layers.0.attention.wq.weight');
  });

  it('moe-tiny is shardable on 1, 2, 4 ranks and routes top-2 of 4 experts', () => {
    const a = MODEL_PRESETS['moe-tiny'];
    expect(a.moe).toMatchObject({ numExperts: 4, topK: 2 });
    for (const p of paramTable(a)) expect(p.shape[0] % 4, p.name).toBe(0);
  });
});

describe('validateModelArgs with moe / mla', () => {
  const base = MODEL_PRESETS['moe-tiny'];
  const err = (x: unknown): ConfigError => {
    try {
      validateModelArgs(x);
    } catch (e) {
      return e as ConfigError;
    }
    throw new Error('no error');
  };

  it('accepts the presets', () => {
    for (const n of ['moe-tiny', 'dsv3-debug', 'dsv3-16b', 'dsv3-671b'] as const) {
      expect(validateModelArgs(MODEL_PRESETS[n])).toEqual(MODEL_PRESETS[n]);
    }
  });

  it('refuses topK above numExperts, naming the field', () => {
    const e = err({ ...base, moe: { ...base.moe, topK: 5 } });
    expect(e.field).toBe('model.moe.topK');
    expect(e.message).toContain('numExperts (4)');
  });

  it('refuses an unknown moe key and a missing mla field', () => {
    expect(err({ ...base, moe: { ...base.moe, capacity: 1 } }).field).toBe('model.moe.capacity');
    expect(err({ ...base, mla: { qLoraRank: 0 } }).field).toBe('model.mla.kvLoraRank');
  });
});
