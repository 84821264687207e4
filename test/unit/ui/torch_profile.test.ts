// The timeline header names the torch knob profile that drew an autobucketing side: the default
// config's B is torch 2.15's, a config with 2.11's knobs says 2.11, edited knobs say custom, and
// a side no autobucketing pass drew says nothing.

import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends';
import { DEFAULT_CONFIG, type SimConfig } from '../../../src/config';
import { simulateConfig } from '../../../src/store/engine';
import { profileWords } from '../../../src/ui/torch_profile';

const tiny = (autobucketing: SimConfig['autobucketing']): SimConfig => ({
  ...DEFAULT_CONFIG,
  model: 'tiny',
  ranks: 2,
  backendA: 'aot_eager',
  backendB: 'aot_eager_autobucketing',
  autobucketing,
});

describe('profileWords', () => {
  it('names torch 2.15 for the default knobs, on side B only', () => {
    const { a, b } = simulateConfig(tiny(DEFAULT_CONFIG.autobucketing));
    expect(profileWords(b)).toBe('knobs: torch 2.15');
    expect(profileWords(a)).toBe('');
  });

  it('names torch 2.11 when the knobs are its profile, custom when they are neither', () => {
    const { b } = simulateConfig(tiny({ ...AUTOBUCKETING_PROFILES['torch-2.11'] }));
    expect(profileWords(b)).toBe('knobs: torch 2.11');
    const edited = { ...AUTOBUCKETING_PROFILES['torch-2.13'], max_in_flight_gb: 3 };
    expect(profileWords(simulateConfig(tiny(edited)).b)).toBe('knobs: custom, neither torch profile');
  });
});
