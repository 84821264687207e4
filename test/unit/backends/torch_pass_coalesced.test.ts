// torch 2.13 with bucket_mode "coalesced" on graphs it passed with every runtime fixed
// (test/fixtures/torch_pass/coalesced): FSDP pre-bucketing merges each reduce-scatter bucket into
// one reduce_scatter_tensor_coalesced (no copy-in / copy-out, a wait per member, no bucket key),
// and the port reaches torch's pre-buckets, schedule, buckets, prefetches, exposure and peak.
// Group A graphs: torch 2.13's defaults plus coalesced; group B: the 2.11 profile plus coalesced
// (no pre-bucketing: the overlap bucketer's reduce-scatter buckets are the coalesced ones).
import { describe, expect, it } from 'vitest';
import { expectPassStats, expectPreBuckets, expectScheduleOrder, preBucketFixtures } from '../../helpers/prebucket';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_KNOBS, AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import type { AutobucketingOptions } from '../../../src/backends/autobucketing/options';
import { isCoalesced } from '../../../src/backends/autobucketing/coalesced';
import { preBucketFsdp } from '../../../src/backends/autobucketing/pre_bucket';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../../src/estimate/nccl_2_13';
import { makeCostModel } from '../../../src/estimate';
import { configFromFlags } from '../../../src/cli/flags';
import { configFromQuery, configToQuery } from '../../../src/config/url';
import { fixtureUrl } from '../../helpers/fixtures';

const { expected: EXPECTED, pairs: PAIRS, load, want: wantOf } = preBucketFixtures(fixtureUrl('torch_pass/coalesced/'));
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILES = { A: AUTOBUCKETING_PROFILES['torch-2.13'], B: AUTOBUCKETING_PROFILES['torch-2.11'] };
const optsOf = (pair: string): AutobucketingOptions => ({
  ...PROFILES[pair.startsWith('A_') ? 'A' : 'B'],
  bucket_mode: 'coalesced',
});

describe('torch 2.13 bucket_mode "coalesced"', () => {
  it('the fixtures were passed with coalesced and the knobs of the profile each test gives the port', () => {
    expect(PAIRS.filter((p) => p.startsWith('A_')).length).toBeGreaterThanOrEqual(4);
    expect(PAIRS.filter((p) => p.startsWith('B_')).length).toBeGreaterThanOrEqual(1);
    for (const [key, want] of Object.entries(EXPECTED)) {
      const opts = optsOf(key);
      expect(want.knobs.bucket_mode).toBe('coalesced');
      expect(want.knobs.pre_bucketing_fsdp_collectives).toBe(opts.pre_bucketing_fsdp_collectives);
      expect(want.knobs.max_off_bucket_gb ?? 0).toBe(opts.max_off_bucket_gb);
    }
  });

  it.each(PAIRS.filter((p) => p.startsWith('A_')))(
    "%s: one coalesced reduce-scatter per bucket, no copies, a wait per member, torch's estimates",
    (pair) => {
      const pre = preBucketFsdp(load(pair), optsOf(pair), NCCL_213_DEFAULT_TOPOLOGY);
      expect(pre).not.toBeNull();
      const nodes = new Map(pre!.graph.nodes.map((n) => [n.name, n]));
      for (const phase of ['forward', 'backward']) {
        const want = wantOf(pair, phase);
        const mine = pre!.buckets.filter((b) => nodes.get(b.start)?.phase === phase);
        for (const b of mine) {
          const start = nodes.get(b.start)!;
          const rs = start.kind === 'reduce_scatter';
          expect(isCoalesced(start), b.start).toBe(rs);
          expect(b.waits.length).toBe(rs ? b.members.length : 1);
        }
        // torch's pre-buckets, and every node it created and timed (no cat for a reduce-scatter)
        expectPreBuckets(
          mine,
          pre!.graph.nodes.filter((n) => n.phase === phase),
          want,
        );
      }
    },
  );

  it.each(PAIRS)("%s: torch's schedule order, node for node", (pair) => {
    const opts = optsOf(pair);
    const pre = opts.pre_bucketing_fsdp_collectives ? preBucketFsdp(load(pair), opts, NCCL_213_DEFAULT_TOPOLOGY) : null;
    expectScheduleOrder(pre?.graph ?? load(pair), cost, opts, (phase) => wantOf(pair, phase));
  });

  it.each(PAIRS)("%s: torch's buckets, prefetches, counts, exposure and peak", (pair) => {
    expectPassStats(runAutobucketing(load(pair), cost, optsOf(pair)), (phase) => wantOf(pair, phase));
  });

  it('coalesced changes what torch decides: exposure differs from the default mode on a pre-bucketed backward', () => {
    const pair = PAIRS.find((p) => p.startsWith('A_') && p.includes('recompute'))!;
    const run = (mode: AutobucketingOptions['bucket_mode']) =>
      runAutobucketing(load(pair), cost, { ...optsOf(pair), bucket_mode: mode }).passStats!.find(
        (p) => p.phase === 'backward',
      )!;
    const want = wantOf(pair, 'backward');
    expect(run('coalesced').scheduledExposedMs).toBeCloseTo(want.totalExposedMs, 9);
    expect(Math.abs(run('default').scheduledExposedMs - want.totalExposedMs)).toBeGreaterThan(1e-6);
  });
});

describe('the bucket_mode knob through config, URL and --set', () => {
  it('is torch\'s "default" in both profiles; --set reaches it; the URL keeps it; a bad value names it', () => {
    for (const p of Object.values(AUTOBUCKETING_PROFILES)) expect(p.bucket_mode).toBe('default');
    expect(AUTOBUCKETING_KNOBS.bucket_mode).toMatchObject({ type: 'enum', values: ['default', 'coalesced'] });
    const cfg = configFromFlags('pass', { set: ['autobucketing.bucket_mode=coalesced'] });
    expect(cfg.autobucketing.bucket_mode).toBe('coalesced');
    const back = configFromQuery(configToQuery(cfg));
    if (!back.ok) throw back.error;
    expect(back.value.autobucketing).toEqual(cfg.autobucketing);
    expect(() => configFromFlags('pass', { set: ['autobucketing.bucket_mode=custom_ops'] })).toThrow(/bucket_mode/);
  });
});
