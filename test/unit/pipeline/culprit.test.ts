// The rank that holds the others up: a straggler run blames the straggler, a symmetric run no one.
import { describe, expect, it } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { findCulprit } from '../../../src/pipeline/culprit';
import { waitOfGraph } from '../../../src/trace/chrome_export';

const culpritOf = (cfg: SimConfig, backend = cfg.backendA) => {
  const run = runPipeline(cfg, backend);
  return { run, c: findCulprit(run.sim.events, waitOfGraph(run.schedule.graph)) };
};

describe('findCulprit', () => {
  it('blames the straggler, and names what it ran while the others waited', () => {
    const { run, c } = culpritOf({ ...defaultConfig(), ranks: 4, straggler: { rank: 2, factor: 2 } });
    expect(c.ranks[0].rank).toBe(2);
    expect(c.ranks[0].heldUpUs).toBeGreaterThan(0);
    // nearly all the blame: the other ranks only come last by rounding
    const total = c.ranks.reduce((s, r) => s + r.heldUpUs, 0);
    expect(c.ranks[0].heldUpUs / total).toBeGreaterThan(0.95);
    expect(c.worst?.rank).toBe(2);
    const op = run.sim.events.find((e) => e.rank === 2 && e.name === c.worst!.op && e.kind === 'compute');
    expect(op).toBeDefined();
  });

  it('moves with the straggler', () => {
    expect(culpritOf({ ...defaultConfig(), ranks: 4, straggler: { rank: 1, factor: 1.5 } }).c.ranks[0].rank).toBe(1);
  });

  it('blames no one in a symmetric run', () => {
    const { c } = culpritOf(defaultConfig(), 'aot_eager_autobucketing');
    expect(c.ranks).toEqual([]);
    expect(c.worst).toBeNull();
  });
});
