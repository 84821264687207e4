// validateConfig: defaults, unknown keys, bad enums, out-of-range numbers, cross-field checks.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { CONFIG_FIELDS, DEFAULT_CONFIG, FIELD_GROUPS, validateConfig } from '../../../src/config';
import { HARDWARE_NAMES } from '../../../src/estimate';

function errorOf(partial: unknown) {
  const r = validateConfig(partial);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(partial)}`);
  expect(r.error).toBeInstanceOf(ConfigError);
  return r.error;
}

describe('DEFAULT_CONFIG', () => {
  it('is the tiny preset on 4 ranks comparing aot_eager with aot_eager_autobucketing', () => {
    expect(DEFAULT_CONFIG).toMatchObject({
      model: 'tiny',
      ranks: 4,
      backendA: 'aot_eager',
      backendB: 'aot_eager_autobucketing',
    });
  });
  it('carries torch 2.13 autobucketing defaults', () => {
    // torch 2.13's schedule_overlap_bucketing signature: max_in_flight_gb 5, max_compute_pre_fetch 200,
    // max_coll_distance 200, compute_overlap_multipler 1.0, max_memory_increase_gb 1.0, ratio 0.05,
    // bucket_exposed_first None ('auto'), max_off_bucket_gb 0.5, pre_bucketing_fsdp_collectives True,
    // prioritize_bucketing_during_scheduling True; inductor config: pre-bucket cap clipped to [10, 500] MB
    const want: Record<string, number | boolean | string> = {
      max_in_flight_gb: 5,
      max_compute_pre_fetch: 200,
      max_coll_distance: 200,
      compute_overlap_multipler: 1,
      max_memory_increase_gb: 1,
      max_memory_increase_ratio: 0.05,
      bucket_exposed_first: 'auto',
      max_off_bucket_gb: 0.5,
      pre_bucketing_fsdp_collectives: true,
      prioritize_bucketing_during_scheduling: true,
      pre_bucketing_fsdp_collectives_min_bucket_cap_mb: 10,
      pre_bucketing_fsdp_collectives_max_bucket_cap_mb: 500,
    };
    for (const [k, v] of Object.entries(want))
      expect((DEFAULT_CONFIG.autobucketing as Record<string, unknown>)[k]).toBe(v);
  });
  it('is valid, and frozen all the way down', () => {
    expect(validateConfig(DEFAULT_CONFIG).ok).toBe(true);
    expect(Object.isFrozen(DEFAULT_CONFIG.autobucketing)).toBe(true);
  });
});

describe('validateConfig', () => {
  it('fills missing fields from the defaults', () => {
    const r = validateConfig({ model: 'llama3-8b', ranks: 8, live: { steps: 3 } });
    if (!r.ok) throw r.error;
    expect(r.value.model).toBe('llama3-8b');
    expect(r.value.live).toEqual({ ...DEFAULT_CONFIG.live, steps: 3 });
    expect(r.value.autobucketing).toEqual(DEFAULT_CONFIG.autobucketing);
  });
  it('rejects an unknown key, top-level or nested, listing the valid keys', () => {
    const e = errorOf({ rank: 4 });
    expect(e.field).toBe('rank');
    expect(e.message).toMatch(/config key must be one of \[.*ranks.*\], got "rank"/);
    const n = errorOf({ autobucketing: { max_inflight_gb: 2 } });
    expect(n.field).toBe('autobucketing.max_inflight_gb');
    expect(n.message).toContain('max_in_flight_gb');
  });
  it('rejects a bad enum, naming the field and the allowed values', () => {
    const e = errorOf({ hardware: 'h800' });
    expect(e.field).toBe('hardware');
    expect(e.message).toBe(`hardware must be one of [${HARDWARE_NAMES.join(', ')}], got "h800"`);
    expect(errorOf({ backendB: 'inductor' }).message).toContain('aot_eager_autobucketing');
  });
  it('rejects out-of-range and wrong-typed numbers, naming the range', () => {
    expect(errorOf({ ranks: 0 }).message).toBe('ranks must be an integer in [1, 1024], got 0');
    expect(errorOf({ ranks: 1025 }).field).toBe('ranks');
    expect(errorOf({ ranks: 2.5 }).field).toBe('ranks');
    expect(errorOf({ jitterPct: -1 }).message).toContain('[0, 50]');
    expect(errorOf({ seqLen: '128' }).field).toBe('seqLen');
    expect(errorOf({ alignment: 'yes' }).message).toContain('true or false');
    expect(errorOf({ bandwidthGBps: 0 }).message).toContain('[0.01,');
    // below the floor a step overflows to Infinity (the CLI printed 8e299 ms, exit 0)
    expect(errorOf({ bandwidthGBps: 1e-300 }).message).toContain('got 1e-300');
  });
  it('rejects a straggler rank outside the ranks', () => {
    const e = errorOf({ ranks: 4, straggler: { rank: 4 } });
    expect(e.field).toBe('straggler.rank');
    expect(e.message).toContain('[0, 3]');
    expect(validateConfig({ ranks: 8, straggler: { rank: 7 } }).ok).toBe(true);
  });
  it('rejects a non-object config and a non-object group', () => {
    expect(errorOf(null).field).toBe('config');
    expect(errorOf({ live: 3 }).field).toBe('live');
  });
  it('has a field-table row for every leaf of the defaults', () => {
    const leaves: string[] = [];
    const walk = (o: object, pre: string) => {
      for (const [k, v] of Object.entries(o))
        v !== null && typeof v === 'object' ? walk(v, `${pre}${k}.`) : leaves.push(pre + k);
    };
    walk(DEFAULT_CONFIG, '');
    expect(CONFIG_FIELDS.map((f) => f.path).sort()).toEqual(leaves.sort());
  });

  it('gives every field one label and a known section: the config panel reads nothing else', () => {
    const labels = CONFIG_FIELDS.map((f) => f.label);
    expect(labels.every((l) => l.length > 0)).toBe(true);
    expect(new Set(labels).size).toBe(labels.length);
    for (const f of CONFIG_FIELDS) expect(Object.keys(FIELD_GROUPS), f.path).toContain(f.group);
    expect(
      CONFIG_FIELDS.filter((f) => f.path.startsWith('autobucketing.')).every((f) => f.group === 'autobucketing'),
    ).toBe(true);
  });
});
