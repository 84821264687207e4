// URL codec: only non-defaults, random round trips, per-field fallback on bad values.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG,
  FIRST_SCREEN_CONFIG,
  configToQuery,
  parseConfigQuery,
  parseLinkQuery,
  validateConfig,
  type SimConfig,
} from '../../../src/config';
import { configFromQuery } from '../../../src/config/url';
import { rng } from '../../helpers/rng';
import { randomConfig } from './random_config';

describe('configToQuery', () => {
  it('writes nothing for the defaults', () => {
    expect(configToQuery(structuredClone(DEFAULT_CONFIG) as SimConfig)).toBe('');
  });
  it('writes only the fields that differ from the defaults', () => {
    const r = validateConfig({ model: 'llama3-8b', ranks: 8, autobucketing: { max_in_flight_gb: 2.5 } });
    if (!r.ok) throw r.error;
    expect(configToQuery(r.value)).toBe('model=llama3-8b&ranks=8&autobucketing.max_in_flight_gb=2.5');
  });
});

describe('configFromQuery', () => {
  it('round-trips 300 random configs deep-equal', () => {
    const r = rng(11);
    for (let i = 0; i < 300; i++) {
      const cfg = randomConfig(r);
      const back = configFromQuery(`?${configToQuery(cfg)}`);
      if (!back.ok) throw back.error;
      expect(back.value).toEqual(cfg);
    }
  });
  it('reports a bad value naming the field and keeps the default for it', () => {
    const { config, errors } = parseConfigQuery('ranks=9999&model=llama3-8b&hardware=tpu');
    expect(errors.map((e) => e.field)).toEqual(['ranks', 'hardware']);
    expect(errors[0].message).toContain('[1, 1024]');
    expect(config.ranks).toBe(DEFAULT_CONFIG.ranks);
    expect(config.hardware).toBe(DEFAULT_CONFIG.hardware);
    expect(config.model).toBe('llama3-8b');
    const strict = configFromQuery('ranks=abc');
    expect(strict.ok).toBe(false);
    if (!strict.ok) expect(strict.error.message).toBe('ranks must be an integer in [1, 1024], got "abc"');
  });
  it('reports an unknown parameter and a straggler outside the ranks', () => {
    const { config, errors } = parseConfigQuery('foo=1&ranks=2&straggler.rank=3');
    expect(errors.map((e) => e.field)).toEqual(['foo', 'straggler.rank']);
    expect(config.ranks).toBe(2);
    expect(config.straggler.rank).toBeNull();
  });
  it('reads only decimal text as a number: 0x10, 1e1, " 5" and Infinity are not counts', () => {
    for (const bad of ['0x10', '1e1', ' 5', 'Infinity', '0b11', '4.0']) {
      const r = configFromQuery(`ranks=${encodeURIComponent(bad)}`);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.error.message).toBe(`ranks must be an integer in [1, 1024], got ${JSON.stringify(bad)}`);
    }
    const r = configFromQuery('ranks=%2B8&autobucketing.max_in_flight_gb=2.5e-1&jitterPct=.5');
    if (!r.ok) throw r.error;
    expect([r.value.ranks, r.value.autobucketing.max_in_flight_gb, r.value.jitterPct]).toEqual([8, 0.25, 0.5]);
    expect(configFromQuery('jitterPct=0x1').ok).toBe(false);
  });
  it('reads booleans and nulls in their URL spellings', () => {
    const r = configFromQuery('alignment=0&seqLen=auto');
    if (!r.ok) throw r.error;
    expect(r.value.alignment).toBe(false);
    expect(r.value.seqLen).toBeNull();
  });
});

describe("parseLinkQuery: the page's read of a link", () => {
  it("a link without a model opens the bare link's model, not the codec's tiny", () => {
    expect(FIRST_SCREEN_CONFIG.model).not.toBe(DEFAULT_CONFIG.model);
    const { config, errors } = parseLinkQuery('?ranks=128');
    expect(errors).toEqual([]);
    expect(config).toEqual({ ...FIRST_SCREEN_CONFIG, ranks: 128 });
    expect(parseLinkQuery('').config).toEqual(FIRST_SCREEN_CONFIG);
    // a bad value falls back to the first screen's, the rest still applies
    const bad = parseLinkQuery('ranks=9999&hardware=a100');
    expect(bad.errors.map((e) => e.field)).toEqual(['ranks']);
    expect(bad.config).toEqual({ ...FIRST_SCREEN_CONFIG, hardware: 'a100' });
  });
  it("a link that names its model reads as written: the codec's defaults under it", () => {
    expect(parseLinkQuery('model=tiny').config).toEqual(DEFAULT_CONFIG);
    expect(parseLinkQuery('model=llama3-8b&ranks=16').config).toEqual({
      ...DEFAULT_CONFIG,
      model: 'llama3-8b',
      ranks: 16,
    });
    const r = rng(5);
    for (let i = 0; i < 100; i++) {
      // the app writes the model into every link (store/url_sync.ts)
      const cfg = randomConfig(r);
      const rest = [...new URLSearchParams(configToQuery(cfg))].filter(([k]) => k !== 'model');
      expect(parseLinkQuery(new URLSearchParams([['model', cfg.model], ...rest]).toString()).config).toEqual(cfg);
    }
  });
});
