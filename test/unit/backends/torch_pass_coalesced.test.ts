// torch 2.13 with bucket_mode "coalesced" on graphs it passed with every runtime fixed
// (test/fixtures/torch_pass/coalesced): FSDP pre-bucketing merges each reduce-scatter bucket into
// one reduce_scatter_tensor_coalesced (no copy-in / copy-out, a wait per member, no bucket key),
// and the port reaches torch's pre-buckets, schedule, buckets, prefetches, exposure and peak.
// Group A graphs: torch 2.13's defaults plus coalesced; group B: the 2.11 profile plus coalesced
// (no pre-bucketing: the overlap bucketer's reduce-scatter buckets are the coalesced ones).
import { describe, expect, it } from 'vitest';
import { type TorchPassExpected, gzJsonReader } from '../../helpers/torch_fixtures';
import { runAutobucketing } from '../../../src/backends';
import {
  AUTOBUCKETING_KNOBS,
  AUTOBUCKETING_PROFILES,
  type AutobucketingOptions,
} from '../../../src/backends/autobucketing';
import { isCoalesced } from '../../../src/backends/autobucketing/coalesced';
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

const readGz = gzJsonReader(new URL('../../fixtures/torch_pass/coalesced/', import.meta.url));

interface Expected extends TorchPassExpected {
  readonly knobs: Record<string, number | boolean | null | string>;
  readonly capMb: number | null;
  readonly preBuckets: string[][];
  readonly newNodeEstimates: Record<string, number>;
}

const EXPECTED = readGz('expected.json.gz') as Record<string, Expected>;
const PAIRS = [...new Set(Object.keys(EXPECTED).map((k) => k.replace(/_(fw|bw)$/, '')))];
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILES = { A: AUTOBUCKETING_PROFILES['torch-2.13'], B: AUTOBUCKETING_PROFILES['torch-2.11'] };
const optsOf = (pair: string): AutobucketingOptions => ({
  ...PROFILES[pair.startsWith('A_') ? 'A' : 'B'],
  bucket_mode: 'coalesced',
});
const sorted = (bs: readonly (readonly string[])[]) =>
  bs.map((b) => [...b].sort()).sort((a, b) => a.join().localeCompare(b.join()));
const phaseKey = (pair: string, phase: string) => `${pair}_${phase === 'forward' ? 'fw' : 'bw'}`;
const plain = (name: string) => name.replace(/\.bw$/, '');

function load(pair: string): StepGraph {
  const imported = importFxGraph(['fw', 'bw'].map((p) => readGz(`fx/${pair}_${p}.json.gz`)));
  if (!imported.ok) throw imported.error;
  return imported.value;
}

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
    '%s: one coalesced reduce-scatter per bucket, no copies, a wait per member, torch\'s estimates',
    (pair) => {
      const pre = preBucketFsdp(load(pair), optsOf(pair), NCCL_213_DEFAULT_TOPOLOGY);
      expect(pre).not.toBeNull();
      const nodes = new Map(pre!.graph.nodes.map((n) => [n.name, n]));
      for (const phase of ['forward', 'backward']) {
        const want = EXPECTED[phaseKey(pair, phase)];
        const mine = pre!.buckets.filter((b) => nodes.get(b.start)?.phase === phase);
        expect(sorted(mine.map((b) => b.members.map(plain)))).toEqual(sorted(want.preBuckets));
        for (const b of mine) {
          const start = nodes.get(b.start)!;
          const rs = start.kind === 'reduce_scatter';
          expect(isCoalesced(start), b.start).toBe(rs);
          expect(b.waits.length).toBe(rs ? b.members.length : 1);
        }
        // every node torch created and timed: same name, same estimate (no cat for a reduce-scatter)
        const byName = new Map(pre!.graph.nodes.filter((n) => n.phase === phase).map((n) => [plain(n.name), n]));
        for (const [name, ms] of Object.entries(want.newNodeEstimates)) {
          const node = byName.get(name);
          expect(node, `node ${name}`).toBeDefined();
          const est = node!.kind === 'view' || node!.kind === 'wait' ? 0 : (node!.estMs ?? NaN);
          expect(est, `estimate of ${name}`).toBeCloseTo(ms, 12);
        }
      }
    },
  );

  it.each(PAIRS)('%s: torch\'s schedule order, node for node', (pair) => {
    const opts = optsOf(pair);
    const pre = opts.pre_bucketing_fsdp_collectives ? preBucketFsdp(load(pair), opts, NCCL_213_DEFAULT_TOPOLOGY) : null;
    const ix = indexGraph(pre?.graph ?? load(pair));
    for (const region of passRegions(ix)) {
      const tg = buildTorchGraph(ix, cost, region);
      const sched = scheduleOverlap(tg, opts);
      expect(sched.order.map((t) => plain(tg.name[t]))).toEqual(EXPECTED[phaseKey(pair, region.phase)].scheduleOrder);
    }
  });

  it.each(PAIRS)('%s: torch\'s buckets, prefetches, counts, exposure and peak', (pair) => {
    const s = runAutobucketing(load(pair), cost, optsOf(pair));
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
    }
    // the output graph: one collective per final bucket plus every unbucketed one
    const colls = s.graph.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter');
    expect(colls.length).toBe(stats.reduce((a, p) => a + p.collectivesAfter, 0));
    const members = sorted(s.buckets.map((b) => b.members.map(plain)));
    expect(members).toEqual(sorted(stats.flatMap((p) => p.buckets)));
  });

  it('coalesced changes what torch decides: exposure differs from the default mode on a pre-bucketed backward', () => {
    const pair = PAIRS.find((p) => p.startsWith('A_') && p.includes('recompute'))!;
    const run = (mode: AutobucketingOptions['bucket_mode']) =>
      runAutobucketing(load(pair), cost, { ...optsOf(pair), bucket_mode: mode }).passStats!.find(
        (p) => p.phase === 'backward',
      )!;
    const want = EXPECTED[phaseKey(pair, 'backward')];
    expect(run('coalesced').scheduledExposedMs).toBeCloseTo(want.totalExposedMs, 9);
    expect(Math.abs(run('default').scheduledExposedMs - want.totalExposedMs)).toBeGreaterThan(1e-6);
  });
});

describe('the bucket_mode knob through config, URL and --set', () => {
  it('is torch\'s "default" in both profiles; --set reaches it; the URL keeps it; a bad value names it', () => {
    for (const p of Object.values(AUTOBUCKETING_PROFILES)) expect(p.bucket_mode).toBe('default');
    expect(AUTOBUCKETING_KNOBS.bucket_mode).toEqual({ type: 'enum', values: ['default', 'coalesced'] });
    const cfg = configFromFlags('pass', { set: ['autobucketing.bucket_mode=coalesced'] });
    expect(cfg.autobucketing.bucket_mode).toBe('coalesced');
    const back = configFromQuery(configToQuery(cfg));
    if (!back.ok) throw back.error;
    expect(back.value.autobucketing).toEqual(cfg.autobucketing);
    expect(() => configFromFlags('pass', { set: ['autobucketing.bucket_mode=custom_ops'] })).toThrow(/bucket_mode/);
  });
});
