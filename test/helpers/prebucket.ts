// The torch 2.13 pre-bucketing fixtures (test/fixtures/torch_pass/prebucket and …/coalesced, both
// condensed by prebucket/make_fixtures.py): reading a folder's graphs and what torch decided on
// each, and the per-graph checks both test files make of the port (schedule order node for node;
// buckets, prefetches, counts, exposure and peak per phase).
import { expect, it } from 'vitest';
import { type TorchPassExpected, gzJsonReader } from './torch_fixtures';
import { type PassStats, type Schedule, runAutobucketing } from '../../src/backends';
import type { AutobucketingOptions } from '../../src/backends/autobucketing/options';
import { profileOf } from '../../src/backends/autobucketing/options';
import { preBucketFsdp } from '../../src/backends/autobucketing/pre_bucket';
import { buildTorchGraph, passRegions } from '../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../src/backends/graph_index';
import type { CostModel } from '../../src/estimate';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../src/estimate/nccl_2_13';
import { importFxGraph } from '../../src/graph';
import type { StepGraph } from '../../src/graph/types';

/** What a pre-bucketing fixture records of one graph, besides every torch-pass fixture's fields. */
export interface PreBucketExpected extends TorchPassExpected {
  readonly knobs: Record<string, number | boolean | null | string>;
  readonly capMb: number | null;
  readonly preBuckets: string[][];
  readonly newNodeEstimates: Record<string, number>;
}

/** Buckets compared as sets of sets. */
const sorted = (bs: readonly (readonly string[])[]) =>
  bs.map((b) => [...b].sort()).sort((a, b) => a.join().localeCompare(b.join()));
/** A node's name as the dump names it (the port suffixes backward copies with '.bw'). */
const plain = (name: string) => name.replace(/\.bw$/, '');

/** A fixture folder (a URL ending in '/'): its graphs, by forward / backward pair, and torch's results. */
export function preBucketFixtures(dir: URL) {
  const readGz = gzJsonReader(dir);
  const expected = readGz('expected.json.gz') as Record<string, PreBucketExpected>;
  const pairs = [...new Set(Object.keys(expected).map((k) => k.replace(/_(fw|bw)$/, '')))];
  const load = (pair: string): StepGraph => {
    const imported = importFxGraph(['fw', 'bw'].map((p) => readGz(`fx/${pair}_${p}.json.gz`)));
    if (!imported.ok) throw imported.error;
    return imported.value;
  };
  const want = (pair: string, phase: string): PreBucketExpected =>
    expected[`${pair}_${phase === 'forward' ? 'fw' : 'bw'}`];
  return { expected, pairs, load, want };
}

/** torch's schedule order, node for node, in every pass region of `graph` (pre-bucketed or not). */
export function expectScheduleOrder(
  graph: StepGraph,
  cost: CostModel,
  opts: AutobucketingOptions,
  want: (phase: string) => TorchPassExpected,
): void {
  const ix = indexGraph(graph);
  for (const region of passRegions(ix)) {
    const tg = buildTorchGraph(ix, cost, region);
    const sched = scheduleOverlap(tg, opts);
    expect(sched.order.map((t) => plain(tg.name[t]))).toEqual(want(region.phase).scheduleOrder);
  }
}

/** One phase: torch's buckets (as sets of original names), overlapping map, counts, exposure and peak. */
export function expectPhaseStats(p: PassStats, w: TorchPassExpected): void {
  expect(sorted(p.buckets), 'buckets as original names').toEqual(sorted(w.buckets));
  expect(p.overlapping).toEqual(w.overlapping);
  expect(p.collectivesBefore).toBe(w.collectivesBefore);
  expect(p.collectivesAfter).toBe(w.collectivesAfter);
  expect(p.scheduledExposedMs).toBeCloseTo(w.totalExposedMs, 9);
  expect(p.potentialExposedMs).toBeCloseTo(w.potentialExposedMs, 9);
  expect(p.peakBytes).toBe(w.peakBytes);
}

/**
 * torch's buckets (original names), overlapping map, counts, exposure and peak per phase, `more`
 * of each phase, and the output graph: one collective per final bucket plus every unbucketed one.
 */
export function expectPassStats<E extends TorchPassExpected>(
  s: Schedule,
  want: (phase: string) => E,
  more?: (p: PassStats, want: E) => void,
): void {
  const stats = s.passStats ?? [];
  expect(stats.map((p) => p.phase)).toEqual(['forward', 'backward']);
  for (const p of stats) {
    const w = want(p.phase);
    expectPhaseStats(p, w);
    more?.(p, w);
  }
  // torch counts every collective start: an all-to-all or all-reduce it never buckets stays one
  const colls = s.graph.nodes.filter((n) => n.collective !== undefined);
  expect(colls.length).toBe(stats.reduce((a, p) => a + p.collectivesAfter, 0));
  const members = sorted(s.buckets.map((b) => b.members.map(plain)));
  expect(members).toEqual(sorted(stats.flatMap((p) => p.buckets)));
}

/**
 * One phase's pre-buckets (members as the dump names them) are torch's, and every node torch's
 * pre-bucketing created and timed is among `nodes` (the phase's): same name, same estimate.
 */
export function expectPreBuckets(
  buckets: readonly { readonly members: readonly string[] }[],
  nodes: StepGraph['nodes'],
  want: PreBucketExpected,
): void {
  expect(sorted(buckets.map((b) => b.members.map(plain)))).toEqual(sorted(want.preBuckets));
  const byName = new Map(nodes.map((n) => [plain(n.name), n]));
  for (const [name, ms] of Object.entries(want.newNodeEstimates)) {
    const node = byName.get(name);
    expect(node, `node ${name}`).toBeDefined();
    const est = node!.kind === 'view' || node!.kind === 'wait' ? 0 : (node!.estMs ?? NaN);
    expect(est, `estimate of ${name}`).toBeCloseTo(ms, 12);
  }
}

/** One torch release's answers on a pre-bucketing fixture set: its pairs, their graphs, torch's results. */
export interface TorchAnswers {
  readonly pairs: readonly string[];
  readonly load: (pair: string) => StepGraph;
  readonly want: (pair: string, phase: string) => PreBucketExpected;
}

/**
 * The checks every release's pre-bucketing fixtures get, one test per pair each: torch's pre-buckets,
 * cap and new-node estimates; its schedule order node for node; its buckets, prefetches, counts and
 * exposure, with the profile named as `profileOf` names it.
 */
export function itMatchesTorchPerPair(t: TorchAnswers, profile: AutobucketingOptions, cost: CostModel): void {
  it.each(t.pairs)("%s: torch's pre-buckets, cap and the estimates of the nodes they create", (pair) => {
    const pre = preBucketFsdp(t.load(pair), profile, NCCL_213_DEFAULT_TOPOLOGY);
    for (const phase of ['forward', 'backward']) {
      const want = t.want(pair, phase);
      const mine = pre?.buckets.filter((b) => pre.graph.nodes.find((n) => n.name === b.start)?.phase === phase) ?? [];
      expectPreBuckets(
        mine,
        (pre?.graph.nodes ?? []).filter((n) => n.phase === phase),
        want,
      );
      const cap = pre?.caps.find((c) => c.phase === phase)?.capMb ?? null;
      if (want.capMb === null) expect(cap).toBeNull();
      else expect(cap).toBeCloseTo(want.capMb, 1);
    }
  });

  it.each(t.pairs)("%s: torch's schedule order on the pre-bucketed graph, node for node", (pair) => {
    const pre = preBucketFsdp(t.load(pair), profile, NCCL_213_DEFAULT_TOPOLOGY);
    expectScheduleOrder(pre?.graph ?? t.load(pair), cost, profile, (phase) => t.want(pair, phase));
  });

  it.each(t.pairs)("%s: torch's buckets, prefetches, counts and exposure", (pair) => {
    const s = runAutobucketing(t.load(pair), cost, profile);
    expect(s.torchProfile).toBe(profileOf(profile));
    expectPassStats(
      s,
      (phase) => t.want(pair, phase),
      (p, want) =>
        expect(p.preBucketing?.estimator ?? null).toBe(want.capMb === null ? null : 'torch-2.13-analytical-nccl'),
    );
  });
}
