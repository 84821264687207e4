// torch 2.13 with its own defaults (FSDP pre-bucketing on, max_off_bucket_gb 0.5,
// bucket_exposed_first auto) on graphs it passed with every runtime fixed
// (test/fixtures/torch_pass/prebucket): the port's 'torch-2.13' profile makes torch's pre-buckets,
// times the nodes they create as torch's estimator did, and reaches torch's schedule, buckets,
// prefetches and exposure.
import { describe, expect, it } from 'vitest';
import { itMatchesTorchPerPair, preBucketFixtures } from '../../helpers/prebucket';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { makeCostModel } from '../../../src/estimate';
import { configFromFlags } from '../../../src/cli/flags';
import { configFromQuery, configToQuery } from '../../../src/config/url';
import { fixtureUrl } from '../../helpers/fixtures';

const { expected: EXPECTED, pairs: PAIRS, load, want: wantOf } = preBucketFixtures(fixtureUrl('torch_pass/prebucket/'));
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.13'];

describe('torch 2.13 defaults: FSDP pre-bucketing before the scheduler', () => {
  it('the fixtures were passed with the knobs the torch-2.13 profile claims', () => {
    for (const want of Object.values(EXPECTED)) {
      expect(want.knobs.pre_bucketing_fsdp_collectives).toBe(PROFILE.pre_bucketing_fsdp_collectives);
      expect(want.knobs.max_off_bucket_gb).toBe(PROFILE.max_off_bucket_gb);
      expect(want.knobs.bucket_exposed_first).toBeNull();
      expect(PROFILE.bucket_exposed_first).toBe('auto');
      expect(want.knobs.max_in_flight_gb).toBe(PROFILE.max_in_flight_gb);
    }
  });

  itMatchesTorchPerPair({ pairs: PAIRS, load, want: wantOf }, PROFILE, cost);
});

describe('the pre-bucketing knobs through config, URL and --torch-profile', () => {
  it('--torch-profile 2.13 turns pre-bucketing on; --set reaches every knob; the URL keeps them', () => {
    const cfg = configFromFlags('pass', {
      'torch-profile': '2.13',
      set: [
        'autobucketing.pre_bucketing_fsdp_collectives_max_bucket_cap_mb=30',
        'autobucketing.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier=0.5',
        'autobucketing.nccl_gpu_type=ampere',
      ],
    });
    expect(cfg.autobucketing).toMatchObject({
      pre_bucketing_fsdp_collectives: true,
      pre_bucketing_fsdp_collectives_max_bucket_cap_mb: 30,
      pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: 0.5,
      nccl_gpu_type: 'ampere',
    });
    const back = configFromQuery(configToQuery(cfg));
    if (!back.ok) throw back.error;
    expect(back.value.autobucketing).toEqual(cfg.autobucketing);
    expect(() => configFromFlags('pass', { set: ['autobucketing.nccl_gpu_type=tpu'] })).toThrow(/nccl_gpu_type/);
    // the cap follows the knobs: 0.5 × the NVLink saturation size, under the 30 MB ceiling
    const pair = 'A_d1024_2layer_seq512_recompute_w8';
    const s = runAutobucketing(load(pair), cost, cfg.autobucketing);
    expect(s.torchProfile).toBe('custom');
    for (const p of s.passStats ?? []) expect(p.preBucketing?.capMb).toBe(30);
    const off = runAutobucketing(load(pair), cost, { ...PROFILE, pre_bucketing_fsdp_collectives: false });
    expect((off.passStats ?? []).every((p) => p.preBucketing === undefined)).toBe(true);
  });
});
