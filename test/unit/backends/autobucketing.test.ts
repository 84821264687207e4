// aot_eager_autobucketing on hand-made graphs: prefetching, budgets, bucketing, reasons,
// determinism and cross-rank alignment (timing claims checked with the simulator). The checks of
// one scheduler or bucketer decision run on torch 2.11's knobs: under the default (2.13's) FSDP
// pre-bucketing merges a small graph's all-gathers into one before the scheduler sees them.
import { describe, expect, it } from 'vitest';
import {
  AUTOBUCKETING_DEFAULTS,
  AUTOBUCKETING_PROFILES,
  runAotEager,
  runAutobucketing,
  type Schedule,
} from '../../../src/backends';
import { alignCostModels } from '../../../src/estimate';
import { simulate } from '../../../src/sim';
import { computeMetrics } from '../../../src/trace';
import { DEFAULT_CAP_BYTES, expectValidSchedule, handGraph, rooflineCost } from './helpers';

type Opts = Parameters<typeof runAutobucketing>[2];
/** The pass with torch 2.11's knobs (no pre-bucketing) under `o`. */
type Args = Parameters<typeof runAutobucketing>;
const run211 = (g: Args[0], cost: Args[1], o: Opts = {}) =>
  runAutobucketing(g, cost, { ...AUTOBUCKETING_PROFILES['torch-2.11'], ...o });
/** The merges pre-bucketing made, original names (empty when it did not run). */
const preBuckets = (s: Schedule) => (s.passStats ?? []).flatMap((p) => p.preBucketing?.buckets ?? []);

const codesOf = (s: Schedule, node: string) => s.reasons.filter((r) => r.node === node).map((r) => r.code);
const exposed = (g: Parameters<typeof runAutobucketing>[0], s: Schedule, cost = rooflineCost()) => {
  const sim = simulate({ worldSize: g.meta.worldSize, schedules: s, cost });
  return computeMetrics(sim.events, sim.memory).exposedCommUs;
};

describe('runAutobucketing', () => {
  const g = handGraph({ layers: 4, paramsPerLayer: 3, seed: 7, elementwise: true });
  const cost = rooflineCost();

  it('returns a valid schedule within the byte cap and the memory budget', () => {
    const s = runAutobucketing(g, cost);
    expectValidSchedule(g, s, { byteCapBytes: DEFAULT_CAP_BYTES });
    expect(s.options).toEqual({ ...AUTOBUCKETING_DEFAULTS });
  });

  it('prefetches a later all-gather behind an earlier compute node', () => {
    const s = run211(g, cost, { collective_bucketing: false });
    const pos = expectValidSchedule(g, s);
    const p1 = 'layers.1.p0.weight';
    // the forward all-gather of layers.1.p0 starts before the matmul of the param before it
    expect(pos.get(`${p1}.all_gather`)!).toBeLessThan(pos.get('layers.0.p2.weight.fwd.mm')!);
    expect(codesOf(s, `${p1}.all_gather`)).toContain('prefetched');
    const reason = s.reasons.find((r) => r.node === `${p1}.all_gather`)!;
    expect(reason.detail).toMatchObject({ kind: 'prefetched', behind: expect.stringMatching(/mm$/) });
  });

  it('exposes less communication than aot_eager in the simulator', () => {
    const a = runAotEager(g, cost);
    const b = runAutobucketing(g, cost);
    expect(exposed(g, b)).toBeLessThan(exposed(g, a));
  });

  it('prefetches nothing when max_in_flight_gb is 0 and says why with the numbers', () => {
    const s = run211(g, cost, { max_in_flight_gb: 0, collective_bucketing: false });
    expectValidSchedule(g, s);
    expect(s.reasons.some((r) => r.code === 'prefetched')).toBe(false);
    const r = s.reasons.find((x) => x.code === 'not_prefetched_in_flight_budget');
    expect(r?.detail).toMatchObject({ kind: 'refused', refusal: { code: r?.code, limitBytes: 0 } });
    if (r?.detail.kind === 'refused' && r.detail.refusal.code === 'not_prefetched_in_flight_budget')
      expect(r.detail.refusal.bytes).toBeGreaterThan(0);
  });

  it('with max_compute_pre_fetch 0, prefetches an all-gather only for the next compute node', () => {
    const s = run211(g, cost, { max_compute_pre_fetch: 0, collective_bucketing: false });
    const ags = s.reasons.filter((r) => r.node.endsWith('all_gather'));
    const prefetched = ags.filter((r) => r.code === 'prefetched');
    // torch: any node with a runtime estimate (a cast, a norm) may still start the next matmul's all-gather
    for (const r of prefetched) expect(r.detail).toMatchObject({ kind: 'prefetched', ahead: 0 });
    const byDefault = run211(g, cost, { collective_bucketing: false }).reasons.filter(
      (r) => r.node.endsWith('all_gather') && r.code === 'prefetched',
    );
    expect(prefetched.length).toBeLessThan(byDefault.length);
  });

  it('prefetches less, and says the memory budget stopped it, when the memory increase budget is 0', () => {
    const tight = run211(g, cost, {
      max_memory_increase_gb: 0,
      max_memory_increase_ratio: 0,
      collective_bucketing: false,
    });
    const loose = run211(g, cost, { collective_bucketing: false });
    expectValidSchedule(g, tight);
    const count = (s: Schedule) => s.reasons.filter((r) => r.code === 'prefetched').length;
    expect(count(tight)).toBeLessThan(count(loose));
    expect(tight.reasons.some((r) => r.code === 'not_prefetched_memory_budget')).toBe(true);
    // torch checks its budget before each prefetch; its own estimate of the original peak is the reference
    for (const p of tight.passStats ?? []) expect(p.allowedPeakBytes).toBe(p.originalPeakBytes);
  });

  it('merges same-key collectives into buckets with one wait each', () => {
    const many = handGraph({ layers: 6, paramsPerLayer: 4, seed: 11, rows: 64 });
    const s = run211(many, cost);
    const pos = expectValidSchedule(many, s, { byteCapBytes: DEFAULT_CAP_BYTES });
    expect(s.buckets.length).toBeGreaterThan(0);
    for (const b of s.buckets) {
      const node = s.graph.nodes[pos.get(b.node)!];
      const waits = s.graph.nodes.filter((n) => n.waitOf === b.node);
      expect(waits).toHaveLength(1);
      // merged wait outputs are the members' wait outputs, in member order
      const memberWaits = b.members.map((m) => many.nodes.find((n) => n.waitOf === m)!);
      expect(waits[0].outputs).toEqual(memberWaits.flatMap((w) => w.outputs));
      expect(node.inputs).toEqual(b.members.flatMap((m) => many.nodes.find((n) => n.name === m)!.inputs));
      expect(b.bytes).toBe(
        b.members.reduce((a, m) => {
          const c = many.nodes.find((n) => n.name === m)!.collective!;
          return a + (c.kind === 'all_gather' ? c.outputBytes : c.inputBytes);
        }, 0),
      );
      for (const m of b.members) expect(codesOf(s, m)).toContain('bucketed');
    }
    expect(s.graph.nodes.filter((n) => n.collective).length).toBeLessThan(
      many.nodes.filter((n) => n.collective).length,
    );
  });

  it('never buckets across process groups', () => {
    const two = handGraph({ layers: 4, paramsPerLayer: 4, seed: 5, rows: 64, twoGroups: true });
    const s = runAutobucketing(two, cost);
    expectValidSchedule(two, s, { byteCapBytes: DEFAULT_CAP_BYTES });
    for (const b of s.buckets)
      expect(new Set(b.members.map((m) => two.nodes.find((n) => n.name === m)!.collective!.group)).size).toBe(1);
  });

  it('makes no bucket over a tiny byte cap and records the cap as the reason', () => {
    const s = run211(g, cost, { max_bucket_memory_gb: 1e-9 });
    expect(s.buckets).toEqual([]);
    expect(s.reasons.some((r) => r.code === 'not_bucketed_byte_cap')).toBe(true);
  });

  it('makes no bucket when collective_bucketing is off', () => {
    expect(run211(g, cost, { collective_bucketing: false }).buckets).toEqual([]);
  });

  it.each([
    ['a tiny byte cap', { max_bucket_memory_gb: 1e-9 }],
    ['collective_bucketing off', { collective_bucketing: false }],
  ] as const)('with the default knobs and %s, keeps only the pre-buckets (torch runs them either way)', (_, o) => {
    const s = runAutobucketing(g, cost, o);
    expectValidSchedule(g, s, { byteCapBytes: Math.floor(('max_bucket_memory_gb' in o ? 1e-9 : 2) * 1024 ** 3) });
    expect(preBuckets(s).length).toBeGreaterThan(0);
    expect(s.buckets.map((b) => [...b.members].sort())).toEqual(preBuckets(s).map((b) => [...b].sort()));
  });

  it.each(['default', 'torch-2.11'] as const)('gives every collective a scheduling reason (%s knobs)', (p) => {
    const s = p === 'default' ? runAutobucketing(g, cost) : run211(g, cost);
    const names = new Set(g.nodes.filter((x) => x.collective).map((x) => x.name));
    for (const name of names) {
      const rs = s.reasons.filter((r) => r.node === name);
      expect(rs.length, name).toBeGreaterThanOrEqual(1);
    }
    // a reason names an original collective, never a node the pre-bucketing made
    for (const r of s.reasons) expect(names.has(r.node), r.node).toBe(true);
  });

  it('says which collectives the default knobs pre-bucketed, on each of them', () => {
    const s = runAutobucketing(g, cost);
    const merged = preBuckets(s);
    expect(merged.length).toBeGreaterThan(0);
    for (const b of merged) {
      for (const m of b) {
        const r = s.reasons.find((x) => x.node === m && x.detail.kind === 'pre_bucketed');
        expect(r?.detail, m).toMatchObject({ kind: 'pre_bucketed', members: b.length });
      }
    }
  });

  it('is deterministic: two runs are deep-equal', () => {
    expect(runAutobucketing(g, cost)).toEqual(runAutobucketing(g, cost));
  });

  it('gives every rank the same schedule once cost models are aligned, and can differ without', () => {
    const big = handGraph({ layers: 6, paramsPerLayer: 3, seed: 21, rows: 512 });
    // launches as long as the collectives: how many collectives one node hides depends on its time
    const perRank = Array.from({ length: 8 }, (_, rank) => rooflineCost({ jitter: 0.6, rank, launchUs: 40 }));
    // each rank aligns the gathered estimates listed from its own first: every rank must plan the same
    const same = perRank.map((_, r) =>
      run211(big, alignCostModels([...perRank.slice(r), ...perRank.slice(0, r)], big)),
    );
    for (const [r, s] of same.entries()) expect(s, `rank ${r}`).toEqual(same[0]);
    const order = (s: Schedule) => s.graph.nodes.map((n) => n.name).join(',');
    // (2.13's pre-bucketing leaves this graph one collective per graph and kind: nothing left to reorder)
    const differing = perRank.map((c) => run211(big, c));
    expect(new Set(differing.map(order)).size).toBeGreaterThan(1);
  });
});
