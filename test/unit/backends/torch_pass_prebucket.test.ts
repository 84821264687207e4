// torch 2.13 with its own defaults (FSDP pre-bucketing on, max_off_bucket_gb 0.5,
// bucket_exposed_first auto) on graphs it passed with every runtime fixed
// (test/fixtures/torch_pass/prebucket): the port's 'torch-2.13' profile makes torch's pre-buckets,
// times the nodes they create as torch's estimator did, and reaches torch's schedule, buckets,
// prefetches and exposure.
import { describe, expect, it } from 'vitest';
import { expectPassStats, expectPreBuckets, expectScheduleOrder, preBucketFixtures } from '../../helpers/prebucket';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { preBucketFsdp } from '../../../src/backends/autobucketing/pre_bucket';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../../src/estimate/nccl_2_13';
import { makeCostModel } from '../../../src/estimate';
import { configFromFlags } from '../../../src/cli/flags';
import { configFromQuery, configToQuery } from '../../../src/config/url';

const { expected: EXPECTED, pairs: PAIRS, load, want: wantOf } = preBucketFixtures(
  new URL('../../fixtures/torch_pass/prebucket/', import.meta.url),
);
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

  it.each(PAIRS)('%s: torch\'s pre-buckets, cap and the estimates of the nodes they create', (pair) => {
    const pre = preBucketFsdp(load(pair), PROFILE, NCCL_213_DEFAULT_TOPOLOGY);
    for (const phase of ['forward', 'backward']) {
      const want = wantOf(pair, phase);
      const mine = pre?.buckets.filter((b) => pre.graph.nodes.find((n) => n.name === b.start)?.phase === phase) ?? [];
      expectPreBuckets(mine, (pre?.graph.nodes ?? []).filter((n) => n.phase === phase), want);
      const cap = pre?.caps.find((c) => c.phase === phase)?.capMb ?? null;
      if (want.capMb === null) expect(cap).toBeNull();
      else expect(cap).toBeCloseTo(want.capMb, 1);
    }
  });

  it.each(PAIRS)('%s: torch\'s schedule order on the pre-bucketed graph, node for node', (pair) => {
    const pre = preBucketFsdp(load(pair), PROFILE, NCCL_213_DEFAULT_TOPOLOGY);
    expectScheduleOrder(pre?.graph ?? load(pair), cost, PROFILE, (phase) => wantOf(pair, phase));
  });

  it.each(PAIRS)('%s: torch\'s buckets, prefetches, counts and exposure', (pair) => {
    const s = runAutobucketing(load(pair), cost, PROFILE);
    expect(s.torchProfile).toBe('torch-2.13');
    expectPassStats(
      s,
      (phase) => wantOf(pair, phase),
      (p, want) =>
        expect(p.preBucketing?.estimator ?? null).toBe(want.capMb === null ? null : 'torch-2.13-analytical-nccl'),
    );
  });
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
