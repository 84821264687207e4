// URL state: the query holds the config (through the config codec) plus the view window and
// theme; reading it back restores the same state, and a bad field falls back with a message.

import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, FIRST_SCREEN_CONFIG, type SimConfig } from '../../../src/config';
import { createAppStore } from '../../../src/store/app_store';
import { readUrlState, writeUrl } from '../../../src/store/url_sync';

function stateWith(cfg: SimConfig, window = { startUs: 0, endUs: 100 }, limitUs = 100) {
  const s = createAppStore().getState();
  return { ...s, config: cfg, window, limitUs };
}

describe('writeUrl / readUrlState', () => {
  it("writes nothing for the first screen, and names the model of the codec's defaults", () => {
    expect(writeUrl(stateWith(structuredClone(FIRST_SCREEN_CONFIG) as SimConfig))).toBe('');
    expect(readUrlState('').config).toBeNull(); // a bare link: the first screen
    // tiny × 4 differs from the codec defaults in nothing: without its model it reads back as the first screen
    const q = writeUrl(stateWith(structuredClone(DEFAULT_CONFIG) as SimConfig));
    expect(q).toBe('?model=tiny');
    expect(readUrlState(q).config).toEqual(DEFAULT_CONFIG);
    const two = { ...(structuredClone(DEFAULT_CONFIG) as SimConfig), ranks: 2 };
    expect(writeUrl(stateWith(two))).toBe('?model=tiny&ranks=2'); // a link always names its model
  });

  it('round-trips config, window and theme', () => {
    const cfg = structuredClone(DEFAULT_CONFIG) as SimConfig;
    cfg.ranks = 16;
    cfg.jitterPct = 3;
    cfg.alignment = false;
    cfg.autobucketing = { ...cfg.autobucketing, max_coll_distance: 50 };
    const s = { ...stateWith(cfg, { startUs: 12.5, endUs: 40 }), theme: 'dark' as const };
    const q = writeUrl(s);
    const back = readUrlState(q);
    expect(back.error).toBeNull();
    expect(back.config).toEqual(cfg);
    expect(back.window).toEqual({ startUs: 12.5, endUs: 40 });
    expect(back.theme).toBe('dark');
  });

  it('carries the presentation view as present=1, beside the story, never as a config field', () => {
    const s = { ...stateWith(structuredClone(FIRST_SCREEN_CONFIG) as SimConfig), story: 'overview', present: true };
    const q = writeUrl(s);
    expect(q).toBe('?story=overview&present=1');
    const back = readUrlState(q);
    expect(back).toMatchObject({ present: true, story: 'overview', config: null, error: null });
    expect(readUrlState('?story=overview').present).toBe(false);
  });

  it('falls back to the default for a bad field and names it', () => {
    const r = readUrlState('?model=tiny&ranks=banana&jitterPct=2');
    expect(r.error).toMatch(/ranks/);
    expect(r.config?.ranks).toBe(DEFAULT_CONFIG.ranks);
    expect(r.config?.jitterPct).toBe(2);
  });

  it("a link without a model opens the bare link's model (the first screen), not tiny", () => {
    const r = readUrlState('?ranks=128');
    expect(r.error).toBeNull();
    expect(r.config).toEqual({ ...FIRST_SCREEN_CONFIG, ranks: 128 });
    expect(readUrlState('?ranks=banana').config?.ranks).toBe(FIRST_SCREEN_CONFIG.ranks);
  });

  it('ignores a malformed view', () => {
    expect(readUrlState('?view=9,3').window).toBeNull();
    expect(readUrlState('?view=a,b').window).toBeNull();
  });
});

describe('story key', () => {
  it('round-trips the story id beside the config, and ignores a malformed one', () => {
    const cfg = structuredClone(DEFAULT_CONFIG) as SimConfig;
    cfg.ranks = 64;
    const q = writeUrl({ ...stateWith(cfg), story: 'ranks-64' });
    expect(q).toContain('story=ranks-64');
    const back = readUrlState(q);
    expect(back.story).toBe('ranks-64');
    expect(back.config).toEqual(cfg);
    expect(back.error).toBeNull(); // 'story' is not read as a config field
    expect(readUrlState('?story=%3Cscript%3E').story).toBeNull();
    expect(readUrlState('?story=straggler').config).toBeNull(); // a story alone: the UI loads it
  });
});
