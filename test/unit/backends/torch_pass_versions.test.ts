// torch 2.15.0 and 2.14.1 with their own defaults on graphs they passed with every runtime fixed
// (test/fixtures/torch_pass/v2_15 and v2_14: the prebucket set's shapes and runs made again; torch
// traced the same dumps, so they are read from ../prebucket/fx): the port's 'torch-2.15' and
// 'torch-2.14' profiles make torch's pre-buckets, time the nodes they create as torch's estimator
// did, and reach torch's schedule, buckets, prefetches and exposure. 2.15's one change from 2.14
// (guard_nested_waits) needs two process groups; these 1-D graphs check that nothing else moved.
import { describe, expect, it } from 'vitest';
import { type PreBucketExpected, itMatchesTorchPerPair, preBucketFixtures } from '../../helpers/prebucket';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { profileOf } from '../../../src/backends/autobucketing/options';
import { makeCostModel } from '../../../src/estimate';
import { configFromFlags } from '../../../src/cli/flags';
import { fixtureUrl } from '../../helpers/fixtures';

const { load } = preBucketFixtures(fixtureUrl('torch_pass/prebucket/'));
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.15'];

/** A version's fixture folder: torch's answers, with the torch that made each. */
function answers(folder: string) {
  const expected = gzJsonReader(fixtureUrl(`torch_pass/${folder}/`))('expected.json.gz') as Record<
    string,
    PreBucketExpected & { readonly torch: string }
  >;
  const pairs = [...new Set(Object.keys(expected).map((k) => k.replace(/_(fw|bw)$/, '')))];
  const want = (pair: string, phase: string) => expected[`${pair}_${phase === 'forward' ? 'fw' : 'bw'}`];
  return { expected, pairs, want };
}

// 2.15: all 7 pairs of ../prebucket; 2.14.1: 3 of them
describe.each([
  ['2.15.0', 'v2_15', 'torch-2.15', 7],
  ['2.14.1', 'v2_14', 'torch-2.14', 3],
] as const)('torch %s defaults: its profile on graphs it passed', (version, folder, name, nPairs) => {
  const { expected: EXPECTED, pairs: PAIRS, want: wantOf } = answers(folder);
  const profile = AUTOBUCKETING_PROFILES[name];

  it(`the fixtures were made by torch ${version} with the knobs the ${name} profile claims`, () => {
    expect(PAIRS).toHaveLength(nPairs);
    for (const want of Object.values(EXPECTED)) {
      expect(want.torch.startsWith(`${version}+`)).toBe(true);
      expect(want.knobs.pre_bucketing_fsdp_collectives).toBe(profile.pre_bucketing_fsdp_collectives);
      expect(want.knobs.max_off_bucket_gb).toBe(profile.max_off_bucket_gb);
      expect(want.knobs.bucket_exposed_first).toBeNull();
      expect(want.knobs.max_in_flight_gb).toBe(profile.max_in_flight_gb);
      expect(want.knobs.max_memory_increase_gb).toBe(profile.max_memory_increase_gb);
      expect(want.knobs.max_memory_increase_ratio).toBe(profile.max_memory_increase_ratio);
    }
  });

  itMatchesTorchPerPair({ pairs: PAIRS, load, want: wantOf }, profile, cost);
});

describe('the 2.14 and 2.15 profiles', () => {
  it('2.14 is 2.13 on this pass (named torch 2.13); 2.15 adds only guard_nested_waits', () => {
    const p13 = AUTOBUCKETING_PROFILES['torch-2.13'];
    expect(AUTOBUCKETING_PROFILES['torch-2.14']).toEqual(p13);
    expect(profileOf(AUTOBUCKETING_PROFILES['torch-2.14'])).toBe('torch-2.13');
    expect(PROFILE).toEqual({ ...p13, guard_nested_waits: true });
    expect(p13.guard_nested_waits).toBe(false);
    expect(AUTOBUCKETING_PROFILES['torch-2.11'].guard_nested_waits).toBe(false);
    expect(profileOf(PROFILE)).toBe('torch-2.15');
  });

  it('--torch-profile 2.14 / 2.15 reach the knobs', () => {
    expect(configFromFlags('pass', { 'torch-profile': '2.15' }).autobucketing).toEqual(PROFILE);
    expect(configFromFlags('pass', { 'torch-profile': '2.14' }).autobucketing).toEqual(
      AUTOBUCKETING_PROFILES['torch-2.14'],
    );
    expect(() => configFromFlags('pass', { 'torch-profile': '2.12' })).toThrow(/one of \[2\.11, 2\.13, 2\.14, 2\.15\]/);
  });
});
