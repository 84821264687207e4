// The backends' per-collective diff: every collective of A matched to B (bucket members included),
// exposed time equal to the rank's blocked waits, aot_eager's collectives fully exposed and unhidden.
import { describe, expect, it } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import { buildGraph, runPipelineOnGraph } from '../../../src/pipeline';
import { DIFF_COLUMNS, diffBackends, diffInputOf, diffCsv, matchKey } from '../../../src/pipeline/diff';
import { computeMetrics } from '../../../src/trace/metrics';
import { reasonText } from '../../../src/words';

function runs(cfg: SimConfig, a = cfg.backendA, b = cfg.backendB, rank = 0) {
  const graph = buildGraph(cfg);
  return [
    runPipelineOnGraph(graph, cfg, a, { emitRanks: [rank] }),
    runPipelineOnGraph(graph, cfg, b, { emitRanks: [rank] }),
  ] as const;
}

describe('diffBackends', () => {
  const cfg = defaultConfig();
  const [a, b] = runs(cfg);
  const d = diffBackends(diffInputOf(a), diffInputOf(b));

  it('matches every collective of A to one of B, by what it moves', () => {
    const colls = a.graph.nodes.filter((n) => n.collective);
    expect(d.rows.map((r) => r.name)).toEqual(colls.map((n) => n.name));
    expect([d.unmatchedA, d.unmatchedB]).toEqual([0, 0]);
    for (const r of d.rows) {
      expect(r.a).not.toBeNull();
      expect(r.b).not.toBeNull();
      const nb = b.graph.nodes.find((n) => n.name === r.name)!;
      expect(nb.params).toEqual(r.params);
    }
    // the match key tells forward gathers, backward re-gathers and reduce-scatters of one parameter apart
    const keys = colls.map(matchKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("gives each of B's bucket members a row carried by the bucket", () => {
    expect(b.schedule.buckets.length).toBeGreaterThan(0);
    for (const bucket of b.schedule.buckets) {
      for (const m of bucket.members) {
        const r = d.rows.find((x) => x.name === m)!;
        expect(r.b).toMatchObject({
          node: bucket.node,
          bucketId: bucket.id,
          bucketSize: bucket.members.length,
        });
        const ev = b.sim.events.find((e) => e.rank === 0 && e.name === bucket.node && e.kind === bucket.kind)!;
        expect(r.b!.startUs).toBe(ev.start);
      }
    }
  });

  it("sums exposed time to the rank's exposed communication (HTA's definition), a bucket counted once", () => {
    for (const [run, side, total] of [
      [a, 'a', d.exposedUsA],
      [b, 'b', d.exposedUsB],
    ] as const) {
      const hta = computeMetrics(run.sim.events.filter((e) => e.rank === 0)).perRank[0].exposedCommUs;
      const byNode = new Map(d.rows.map((r) => [r[side]!.node, r[side]!.exposedUs]));
      const sum = [...byNode.values()].reduce((s, x) => s + x, 0);
      expect(sum).toBeCloseTo(total, 6);
      expect(total).toBeCloseTo(hta, 3);
    }
    expect(d.exposedUsB).toBeLessThan(d.exposedUsA);
  });

  it('finds nothing hiding aot_eager collectives and compute hiding what B prefetched', () => {
    for (const r of d.rows) {
      expect(r.a!.hiddenUs).toBeCloseTo(0, 9);
      expect(r.a!.exposedUs).toBeCloseTo(r.a!.endUs - r.a!.startUs, 6);
      expect(r.b!.hiddenUs).toBeLessThanOrEqual(r.b!.endUs - r.b!.startUs + 1e-9);
      expect(r.deltaExposedUs).toBeCloseTo(r.b!.exposedUs - r.a!.exposedUs, 9);
    }
    const prefetched = d.rows.filter((r) => r.reasons.some((x) => x.code === 'prefetched'));
    expect(prefetched.length).toBeGreaterThan(0);
    for (const r of prefetched) {
      expect(r.b!.hiddenUs).toBeGreaterThan(0);
      expect(r.b!.hiddenBy.length).toBeGreaterThan(0);
    }
    // torch's own record of what it started each prefetch behind rides along
    expect(d.rows.some((r) => r.prefetchedBehind.length > 0)).toBe(true);
  });

  it("carries B's reasons for each collective", () => {
    for (const r of d.rows) {
      const want = b.schedule.reasons.filter((x) => x.node === r.name).map((x) => x.code);
      expect(r.reasons.map((x) => x.code)).toEqual(want);
    }
  });

  it('diffs two bucketing backends on another rank', () => {
    const c: SimConfig = { ...defaultConfig(), ranks: 8 };
    const [ta, tb] = runs(c, 'transformer_block', 'aot_eager_autobucketing', 3);
    const dd = diffBackends(diffInputOf(ta), diffInputOf(tb), 3);
    expect(dd.rank).toBe(3);
    expect(dd.rows.every((r) => r.a && r.b)).toBe(true);
    const blockMembers = ta.schedule.buckets.reduce((n, x) => n + x.members.length, 0);
    expect(dd.rows.filter((r) => r.a!.bucketId !== null)).toHaveLength(blockMembers);
  });

  it('exports CSV with a header and one line per collective', () => {
    const lines = diffCsv(d.rows, reasonText).split('\n');
    expect(lines[0]).toBe(DIFF_COLUMNS.join(','));
    expect(lines).toHaveLength(d.rows.length + 1);
  });
});
