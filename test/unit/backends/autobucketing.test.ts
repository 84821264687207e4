// aot_eager_autobucketing on hand-made graphs: prefetching, budgets, bucketing, reasons,
// determinism and cross-rank alignment (timing claims checked with the simulator).
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_DEFAULTS, runAotEager, runAutobucketing, type Schedule } from '../../../src/backends';
import { alignCostModels } from '../../../src/estimate';
import { simulate } from '../../../src/sim';
import { computeMetrics } from '../../../src/trace';
import { DEFAULT_CAP_BYTES, expectValidSchedule, handGraph, rooflineCost } from './helpers';

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
    const s = runAutobucketing(g, cost, { collective_bucketing: false });
    const pos = expectValidSchedule(g, s);
    const p1 = 'layers.1.p0.weight';
    // the forward all-gather of layers.1.p0 starts before the matmul of the param before it
    expect(pos.get(`${p1}.all_gather`)!).toBeLessThan(pos.get('layers.0.p2.weight.fwd.mm')!);
    expect(codesOf(s, `${p1}.all_gather`)).toContain('prefetched');
    const reason = s.reasons.find((r) => r.node === `${p1}.all_gather`)!;
    expect(reason.text).toMatch(/prefetched behind .*mm/);
  });

  it('exposes less communication than aot_eager in the simulator', () => {
    const a = runAotEager(g, cost);
    const b = runAutobucketing(g, cost);
    expect(exposed(g, b)).toBeLessThan(exposed(g, a));
  });

  it('prefetches nothing when max_in_flight_gb is 0 and says why with the numbers', () => {
    const s = runAutobucketing(g, cost, { max_in_flight_gb: 0, collective_bucketing: false });
    expectValidSchedule(g, s);
    expect(s.reasons.some((r) => r.code === 'prefetched')).toBe(false);
    const r = s.reasons.find((x) => x.code === 'not_prefetched_in_flight_budget');
    expect(r?.text).toMatch(/in-flight budget full \(.* > max_in_flight_gb 0/);
  });

  it('with max_compute_pre_fetch 0, prefetches an all-gather only for the next compute node', () => {
    const s = runAutobucketing(g, cost, { max_compute_pre_fetch: 0, collective_bucketing: false });
    const ags = s.reasons.filter((r) => r.node.endsWith('all_gather'));
    const prefetched = ags.filter((r) => r.code === 'prefetched');
    // torch: any node with a runtime estimate (a cast, a norm) may still start the next matmul's all-gather
    for (const r of prefetched) expect(r.text).toMatch(/\(0 compute node\(s\) before its first use\)/);
    const byDefault = runAutobucketing(g, cost, { collective_bucketing: false }).reasons.filter((r) => r.node.endsWith('all_gather') && r.code === 'prefetched');
    expect(prefetched.length).toBeLessThan(byDefault.length);
  });

  it('prefetches less, and says the memory budget stopped it, when the memory increase budget is 0', () => {
    const tight = runAutobucketing(g, cost, { max_memory_increase_gb: 0, max_memory_increase_ratio: 0, collective_bucketing: false });
    const loose = runAutobucketing(g, cost, { collective_bucketing: false });
    expectValidSchedule(g, tight);
    const count = (s: Schedule) => s.reasons.filter((r) => r.code === 'prefetched').length;
    expect(count(tight)).toBeLessThan(count(loose));
    expect(tight.reasons.some((r) => r.code === 'not_prefetched_memory_budget')).toBe(true);
    // torch checks its budget before each prefetch; its own estimate of the original peak is the reference
    for (const p of tight.passStats ?? []) expect(p.allowedPeakBytes).toBe(p.originalPeakBytes);
  });

  it('merges same-key collectives into buckets with one wait each', () => {
    const many = handGraph({ layers: 6, paramsPerLayer: 4, seed: 11, rows: 64 });
    const s = runAutobucketing(many, cost);
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
      expect(b.bytes).toBe(b.members.reduce((a, m) => {
        const c = many.nodes.find((n) => n.name === m)!.collective!;
        return a + (c.kind === 'all_gather' ? c.outputBytes : c.inputBytes);
      }, 0));
      for (const m of b.members) expect(codesOf(s, m)).toContain('bucketed');
    }
    expect(s.graph.nodes.filter((n) => n.collective).length).toBeLessThan(many.nodes.filter((n) => n.collective).length);
  });

  it('never buckets across process groups', () => {
    const two = handGraph({ layers: 4, paramsPerLayer: 4, seed: 5, rows: 64, twoGroups: true });
    const s = runAutobucketing(two, cost);
    expectValidSchedule(two, s, { byteCapBytes: DEFAULT_CAP_BYTES });
    for (const b of s.buckets) expect(new Set(b.members.map((m) => two.nodes.find((n) => n.name === m)!.collective!.group)).size).toBe(1);
  });

  it('makes no bucket over a tiny byte cap and records the cap as the reason', () => {
    const s = runAutobucketing(g, cost, { max_bucket_memory_gb: 1e-9 });
    expect(s.buckets).toEqual([]);
    expect(s.reasons.some((r) => r.code === 'not_bucketed_byte_cap')).toBe(true);
  });

  it('makes no bucket when collective_bucketing is off', () => {
    expect(runAutobucketing(g, cost, { collective_bucketing: false }).buckets).toEqual([]);
  });

  it('gives every original collective a readable scheduling reason', () => {
    const s = runAutobucketing(g, cost);
    for (const n of g.nodes.filter((x) => x.collective)) {
      const rs = s.reasons.filter((r) => r.node === n.name);
      expect(rs.length).toBeGreaterThanOrEqual(1);
      for (const r of rs) expect(r.text).toMatch(/^[a-z].*\.$/);
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
    const same = perRank.map((_, r) => runAutobucketing(big, alignCostModels([...perRank.slice(r), ...perRank.slice(0, r)], big)));
    for (const [r, s] of same.entries()) expect(s, `rank ${r}`).toEqual(same[0]);
    const order = (s: Schedule) => s.graph.nodes.map((n) => n.name).join(',');
    const differing = perRank.map((c) => runAutobucketing(big, c));
    expect(new Set(differing.map(order)).size).toBeGreaterThan(1);
  });
});
