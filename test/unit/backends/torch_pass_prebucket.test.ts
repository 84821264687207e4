// torch 2.13 with its own defaults (FSDP pre-bucketing on, max_off_bucket_gb 0.5,
// bucket_exposed_first auto) on graphs it passed with every runtime fixed
// (test/fixtures/torch_pass/prebucket): the port's 'torch-2.13' profile makes torch's pre-buckets,
// times the nodes they create as torch's estimator did, and reaches torch's schedule, buckets,
// prefetches and exposure.
import { describe, expect, it } from 'vitest';
import { type TorchPassExpected, gzJsonReader } from '../../helpers/torch_fixtures';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { preBucketFsdp } from '../../../src/backends/autobucketing/pre_bucket';
import { buildTorchGraph, passRegions } from '../../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../../src/backends/graph_index';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../../src/estimate/nccl_2_13';
import { makeCostModel } from '../../../src/estimate';
import { importFxGraph } from '../../../src/graph';
import type { StepGraph } from '../../../src/graph/types';
import { configFromFlags } from '../../../src/cli/flags';
import { configFromQuery, configToQuery } from '../../../src/config/url';

const readGz = gzJsonReader(new URL('../../fixtures/torch_pass/prebucket/', import.meta.url));

interface Expected extends TorchPassExpected {
  readonly knobs: Record<string, number | boolean | null | string>;
  readonly capMb: number | null;
  readonly preBuckets: string[][];
  readonly collectivesAfterPrebucketing: number;
  readonly newNodeEstimates: Record<string, number>;
}

const EXPECTED = readGz('expected.json.gz') as Record<string, Expected>;
const PAIRS = [...new Set(Object.keys(EXPECTED).map((k) => k.replace(/_(fw|bw)$/, '')))];
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.13'];
const sorted = (bs: readonly (readonly string[])[]) =>
  bs.map((b) => [...b].sort()).sort((a, b) => a.join().localeCompare(b.join()));
const phaseKey = (pair: string, phase: string) => `${pair}_${phase === 'forward' ? 'fw' : 'bw'}`;

function load(pair: string): StepGraph {
  const imported = importFxGraph(['fw', 'bw'].map((p) => readGz(`fx/${pair}_${p}.json.gz`)));
  if (!imported.ok) throw imported.error;
  return imported.value;
}

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
      const want = EXPECTED[phaseKey(pair, phase)];
      const mine = pre?.buckets.filter((b) => pre.graph.nodes.find((n) => n.name === b.start)?.phase === phase) ?? [];
      expect(sorted(mine.map((b) => b.members.map((m) => m.replace(/\.bw$/, ''))))).toEqual(sorted(want.preBuckets));
      const cap = pre?.caps.find((c) => c.phase === phase)?.capMb ?? null;
      if (want.capMb === null) expect(cap).toBeNull();
      else expect(cap).toBeCloseTo(want.capMb, 1);
      // every node torch created and timed: same name, same estimate
      const here = (pre?.graph.nodes ?? []).filter((n) => n.phase === phase);
      const byName = new Map(here.map((n) => [n.name.replace(/\.bw$/, ''), n]));
      for (const [name, ms] of Object.entries(want.newNodeEstimates)) {
        const node = byName.get(name);
        expect(node, `node ${name}`).toBeDefined();
        const est = node!.kind === 'view' || node!.kind === 'wait' ? 0 : (node!.estMs ?? NaN);
        expect(est, `estimate of ${name}`).toBeCloseTo(ms, 12);
      }
    }
  });

  it.each(PAIRS)('%s: torch\'s schedule order on the pre-bucketed graph, node for node', (pair) => {
    const pre = preBucketFsdp(load(pair), PROFILE, NCCL_213_DEFAULT_TOPOLOGY);
    const ix = indexGraph(pre?.graph ?? load(pair));
    for (const region of passRegions(ix)) {
      const tg = buildTorchGraph(ix, cost, region);
      const sched = scheduleOverlap(tg, PROFILE);
      const want = EXPECTED[phaseKey(pair, region.phase)];
      expect(sched.order.map((t) => tg.name[t].replace(/\.bw$/, ''))).toEqual(want.scheduleOrder);
    }
  });

  it.each(PAIRS)('%s: torch\'s buckets, prefetches, counts and exposure', (pair) => {
    const s = runAutobucketing(load(pair), cost, PROFILE);
    expect(s.torchProfile).toBe('torch-2.13');
    const stats = s.passStats ?? [];
    expect(stats.map((p) => p.phase)).toEqual(['forward', 'backward']);
    for (const p of stats) {
      const want = EXPECTED[phaseKey(pair, p.phase)];
      expect(sorted(p.buckets), 'buckets as original names').toEqual(sorted(want.buckets));
      expect(p.overlapping).toEqual(want.overlapping);
      expect(p.collectivesBefore).toBe(want.collectivesBefore);
      expect(p.collectivesAfter).toBe(want.collectivesAfter);
      expect(p.scheduledExposedMs).toBeCloseTo(want.totalExposedMs, 9);
      expect(p.potentialExposedMs).toBeCloseTo(want.potentialExposedMs, 9);
      expect(p.peakBytes).toBe(want.peakBytes);
      expect(p.preBucketing?.estimator ?? null).toBe(want.capMb === null ? null : 'torch-2.13-analytical-nccl');
    }
    // the output graph: one collective per final bucket plus every unbucketed one, members as the dump names them
    const colls = s.graph.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter');
    expect(colls.length).toBe(stats.reduce((a, p) => a + p.collectivesAfter, 0));
    const members = sorted(s.buckets.map((b) => b.members.map((m) => m.replace(/\.bw$/, ''))));
    expect(members).toEqual(sorted(stats.flatMap((p) => p.buckets)));
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
