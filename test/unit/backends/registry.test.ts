// The backend registry: names, torchtitan's backend override rule, option validation.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, getBackend, resolveBackendName, runBackend } from '../../../src/backends';
import { ConfigError } from '../../../src/errors';
import { handGraph, rooflineCost } from './helpers';

describe('getBackend', () => {
  it('returns the backend registered under each name', () => {
    for (const name of BACKEND_NAMES) expect(getBackend(name).name).toBe(name);
  });

  it('throws a ConfigError listing the valid names for an unknown one', () => {
    expect(() => getBackend('foo')).toThrow(ConfigError);
    expect(() => getBackend('foo')).toThrow(
      "compile.backend must be one of [aot_eager, aot_eager_autobucketing, transformer_block, fsdp2_eager], got 'foo'",
    );
  });
});

describe('resolveBackendName', () => {
  it('uses compile.backend when no override is set', () => {
    expect(resolveBackendName({ 'compile.backend': 'aot_eager_autobucketing' })).toBe('aot_eager_autobucketing');
    expect(resolveBackendName({})).toBe('aot_eager');
  });

  it('lets compile.model_backend_override win when set (torchtitan)', () => {
    expect(
      resolveBackendName({ 'compile.backend': 'aot_eager', 'compile.model_backend_override': 'transformer_block' }),
    ).toBe('transformer_block');
    expect(resolveBackendName({ 'compile.backend': 'transformer_block', 'compile.model_backend_override': '' })).toBe(
      'transformer_block',
    );
  });

  it('names the offending key in the error', () => {
    expect(() => resolveBackendName({ 'compile.backend': 'inductor' })).toThrow(/^compile\.backend must be one of/);
    try {
      resolveBackendName({ 'compile.model_backend_override': 'foo' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe('compile.model_backend_override');
    }
  });
});

describe('runBackend', () => {
  const g = handGraph({ layers: 2, paramsPerLayer: 2 });
  it('runs each backend and tags the schedule with its name', () => {
    for (const name of BACKEND_NAMES) expect(runBackend(name, g, rooflineCost()).backend).toBe(name);
  });

  it('rejects unknown option keys and out-of-range knobs naming the knob and the range', () => {
    expect(() => runBackend('aot_eager_autobucketing', g, rooflineCost(), { max_inflight_gb: 2 })).toThrow(
      /unknown option aot_eager_autobucketing\.max_inflight_gb.*max_in_flight_gb/,
    );
    expect(() => runBackend('aot_eager_autobucketing', g, rooflineCost(), { max_in_flight_gb: -1 })).toThrow(
      'aot_eager_autobucketing.max_in_flight_gb must be a number in [0, 1024], got -1',
    );
    expect(() => runBackend('aot_eager_autobucketing', g, rooflineCost(), { max_compute_pre_fetch: 1.5 })).toThrow(
      /an integer/,
    );
    expect(() => runBackend('aot_eager_autobucketing', g, rooflineCost(), { bucket_exposed_first: 'yes' })).toThrow(
      /one of \[true, false, auto\]/,
    );
    expect(() => runBackend('transformer_block', g, rooflineCost(), { x: 1 })).toThrow(ConfigError);
  });
});
