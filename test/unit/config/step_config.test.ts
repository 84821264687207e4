// activationCheckpointing in SimConfig: validation, the URL codec, the preset default
// (torchtitan's train configs) and the StepConfig the builder gets.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG,
  activationCheckpointingOf,
  configToQuery,
  defaultConfig,
  stepConfigOf,
  validateConfig,
} from '../../../src/config';
import { configFromQuery } from '../../../src/config/url';
import { buildStepGraph } from '../../../src/graph';
import { isRecomputeNode } from '../../../src/graph/checkpoint';

describe('activationCheckpointingOf', () => {
  it('uses the preset mode when null: none for tiny, selective for 8b, full for 70b and 405b (torchtitan)', () => {
    expect(activationCheckpointingOf({ model: 'llama3-8b', activationCheckpointing: null })).toBe('selective');
    expect(DEFAULT_CONFIG.activationCheckpointing).toBeNull();
    expect(activationCheckpointingOf(DEFAULT_CONFIG)).toBe('none');
    expect(activationCheckpointingOf({ model: 'llama3-405b', activationCheckpointing: null })).toBe('full');
    expect(activationCheckpointingOf({ model: 'llama3-70b', activationCheckpointing: null })).toBe('full');
    expect(activationCheckpointingOf({ model: 'llama3-405b', activationCheckpointing: 'none' })).toBe('none');
    expect(activationCheckpointingOf({ model: 'tiny', activationCheckpointing: 'full' })).toBe('full');
  });
});

describe('validateConfig activationCheckpointing', () => {
  it('accepts none, full and null and rejects anything else naming the valid set', () => {
    for (const v of ['none', 'selective', 'full', null])
      expect(validateConfig({ activationCheckpointing: v }).ok).toBe(true);
    const r = validateConfig({ activationCheckpointing: 'sac' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.field).toBe('activationCheckpointing');
      expect(r.error.message).toMatch(/\[none, selective, full, null\].*sac/);
    }
  });

  it('round-trips through the URL and stays out of the default query', () => {
    expect(configToQuery(defaultConfig())).toBe('');
    const cfg = { ...defaultConfig(), activationCheckpointing: 'full' as const };
    const q = configToQuery(cfg);
    expect(q).toBe('activationCheckpointing=full');
    const back = configFromQuery(q);
    expect(back.ok && back.value.activationCheckpointing).toBe('full');
    const auto = configFromQuery('activationCheckpointing=auto');
    expect(auto.ok && auto.value.activationCheckpointing).toBeNull();
  });
});

describe('stepConfigOf', () => {
  it('builds the default view without recompute and an AC graph when asked', () => {
    expect(buildStepGraph(stepConfigOf(defaultConfig())).nodes.some(isRecomputeNode)).toBe(false);
    const g = buildStepGraph(stepConfigOf({ ...defaultConfig(), activationCheckpointing: 'full' }));
    expect(g.nodes.some(isRecomputeNode)).toBe(true);
  });
});
