// simMetrics / replicateMetrics: metrics of a symmetric simulation from one rank equal HTA's
// metrics over every emitted rank (computeMetrics on the full trace), bit for bit; shownRanks
// trims events without changing the metrics.
import { describe, expect, it } from 'vitest';
import { validateConfig, type SimConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { simMetrics } from '../../../src/pipeline/symmetric_metrics';
import { computeMetrics } from '../../../src/trace/metrics';

function cfg(partial: Record<string, unknown>): SimConfig {
  const r = validateConfig(partial);
  if (!r.ok) throw r.error;
  return r.value;
}

describe('simMetrics', () => {
  it('equals computeMetrics over all ranks of a symmetric run, for world sizes that do not divide evenly', () => {
    for (const ranks of [1, 3, 5, 6, 7, 12]) {
      for (const backend of ['aot_eager', 'aot_eager_autobucketing'] as const) {
        const r = runPipeline(cfg({ ranks }), backend);
        expect(r.sim.symmetric).toBe(true);
        const full = computeMetrics(r.sim.events, r.sim.memory);
        expect(JSON.stringify(simMetrics(r.sim))).toBe(JSON.stringify(full));
        expect(r.metrics).toStrictEqual(full);
      }
    }
  });

  it('falls back to computeMetrics when ranks differ (straggler)', () => {
    const r = runPipeline(cfg({ ranks: 6, straggler: { rank: 4, factor: 3 } }), 'aot_eager');
    expect(r.sim.symmetric).toBe(false);
    expect(simMetrics(r.sim)).toStrictEqual(computeMetrics(r.sim.events, r.sim.memory));
  });
});

describe('runPipeline shownRanks', () => {
  it('keeps the first k ranks of events and memory and the metrics of all ranks (symmetric)', () => {
    const c = cfg({ ranks: 7 });
    const full = runPipeline(c, 'aot_eager_autobucketing');
    const cut = runPipeline(c, 'aot_eager_autobucketing', { shownRanks: 3 });
    expect(JSON.stringify(cut.metrics)).toBe(JSON.stringify(full.metrics));
    expect(cut.metrics.perRank).toHaveLength(7);
    expect(JSON.stringify(cut.sim.events)).toBe(JSON.stringify(full.sim.events.filter((e) => e.rank < 3)));
    expect(cut.sim.memory.map((m) => m.rank)).toEqual([0, 1, 2]);
    expect(cut.sim.stepUs).toBe(full.sim.stepUs);
  });

  it('keeps the first k ranks and the metrics of all ranks when ranks differ (jitter, straggler)', () => {
    for (const extra of [{ jitterPct: 5, seed: 2 }, { straggler: { rank: 6, factor: 2 } }]) {
      const c = cfg({ ranks: 8, ...extra });
      const full = runPipeline(c, 'aot_eager_autobucketing');
      const cut = runPipeline(c, 'aot_eager_autobucketing', { shownRanks: 2 });
      expect(cut.sim.symmetric).toBe(false);
      expect(cut.metrics).toStrictEqual(full.metrics);
      expect(cut.sim.events).toStrictEqual(full.sim.events.filter((e) => e.rank < 2));
      expect(cut.sim.memory).toStrictEqual(full.sim.memory.slice(0, 2));
    }
  });
});
