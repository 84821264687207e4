// Fuzz: random and mangled configs / URLs always end in a SimConfig or a ConfigError that names
// the field — never a throw; valid small configs run through the pipeline.
import { describe, expect, it } from 'vitest';
import { CONFIG_FIELDS, DEFAULT_CONFIG, parseConfigQuery, validateConfig } from '../../../src/config';
import { configFromQuery } from '../../../src/config/url';
import { ConfigError } from '../../../src/errors';
import { runPipeline } from '../../../src/pipeline';
import { rng } from '../../helpers/rng';
import { randomConfig } from './random_config';

const JUNK: unknown[] = [
  null,
  undefined,
  -1,
  0,
  0.5,
  3,
  1e9,
  NaN,
  Infinity,
  '',
  'tiny',
  'h100',
  'true',
  true,
  false,
  [],
  {},
  { x: 1 },
  [1],
];
const KEYS = [
  ...CONFIG_FIELDS.map((f) => f.path),
  'rank',
  'autobucketing.nope',
  'live.gpu',
  'model.x',
  '__proto__',
  'constructor',
];

describe('validateConfig fuzz', () => {
  it('ends 600 mangled configs in a config or a ConfigError naming a field', () => {
    const r = rng(99);
    let errors = 0;
    const N = 600; // about 1 in 16 survives: enough draws that the valid branch is always well exercised
    for (let i = 0; i < N; i++) {
      const partial: Record<string, unknown> = {};
      const n = 1 + Math.floor(r() * 4);
      for (let j = 0; j < n; j++) {
        const path = KEYS[Math.floor(r() * KEYS.length)].split('.');
        let o = partial;
        for (const k of path.slice(0, -1))
          o = (o[k] = typeof o[k] === 'object' && o[k] !== null ? o[k] : {}) as Record<string, unknown>;
        o[path[path.length - 1]] =
          r() < 0.3 ? JSON.parse(JSON.stringify(DEFAULT_CONFIG))[path[0]] : JUNK[Math.floor(r() * JUNK.length)];
      }
      const res = validateConfig(partial);
      if (!res.ok) {
        errors++;
        expect(res.error).toBeInstanceOf(ConfigError);
        expect(res.error.message, res.error.field).toContain(res.error.field);
      } else {
        // a valid result validates again to itself
        const again = validateConfig(res.value);
        expect(again.ok && again.value).toEqual(res.value);
      }
    }
    // both branches must be exercised: a validator that refused everything would pass the loop
    expect(errors).toBeGreaterThan(50);
    expect(N - errors).toBeGreaterThan(20);
  });

  it('reads 300 random query strings without throwing, always yielding a valid config', () => {
    const r = rng(5);
    const chars = 'abc=&.%?01-_ x';
    for (let i = 0; i < 300; i++) {
      let q = '';
      const len = Math.floor(r() * 40);
      for (let j = 0; j < len; j++)
        q +=
          r() < 0.3
            ? `${KEYS[Math.floor(r() * KEYS.length)]}=${String(JUNK[Math.floor(r() * JUNK.length)])}&`
            : chars[Math.floor(r() * chars.length)];
      const { config, errors } = parseConfigQuery(q);
      expect(validateConfig(config).ok).toBe(true);
      for (const e of errors) expect(e).toBeInstanceOf(ConfigError);
      expect(configFromQuery(q).ok).toBe(errors.length === 0);
    }
  });

  it('runs the pipeline on 12 random valid small configs: each gives a step or a reported mismatch', () => {
    const r = rng(17);
    for (let i = 0; i < 12; i++) {
      const c = randomConfig(r);
      // keep the run small: the tiny model, few ranks, short sequences
      const small = {
        ...c,
        model: 'tiny' as const,
        ranks: 1 + (c.ranks % 6),
        localBatch: c.localBatch === null ? null : 1 + (c.localBatch % 4),
        seqLen: c.seqLen === null ? null : 1 + (c.seqLen % 64),
      };
      small.straggler = { ...c.straggler, rank: c.straggler.rank === null ? null : c.straggler.rank % small.ranks };
      // the mesh was drawn for c.ranks: FSDP on the new ranks (meshes have their own tests)
      small.parallelism = {
        ...c.parallelism,
        data_parallel_shard_degree: -1,
        data_parallel_replicate_degree: 1,
        tensor_parallel_degree: 1,
        expert_parallel_degree: 1, // the tiny model is dense
      };
      // the config validated, so nothing may throw: a ConfigError here would be a field the table lets through
      expect(validateConfig(small).ok, `config ${i}`).toBe(true);
      const out = runPipeline(small, small.backendB);
      expect(Number.isFinite(out.metrics.stepTimeUs), `config ${i}`).toBe(true);
      // a hang (alignment off + jitter) is reported, not timed; anything else is a whole step
      if (!out.sim.mismatch) expect(out.metrics.stepTimeUs, `config ${i}`).toBeGreaterThan(0);
    }
  });
});
