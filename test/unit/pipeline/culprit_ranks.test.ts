// Issue 22 S2: from 64 ranks up the simulator emits rank 0 only, and `diff` read like a symmetric
// run. culpritPlan names the ranks the culprit needs; a straggler's three ranks give what all
// ranks give; what cannot be computed says so.
import { describe, expect, it } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import { buildGraph, runPipelineOnGraph } from '../../../src/pipeline';
import { CULPRIT_EVENT_BUDGET, culpritPlan, findCulprit } from '../../../src/pipeline/culprit';
import { waitOfGraph } from '../../../src/trace/chrome_export';
import { cli } from '../../helpers/cli';

const run = { worldSize: 64, rank: 0, nodes: 1000, jitterPct: 0, straggler: null, oneDim: true };

describe('culpritPlan', () => {
  it('leaves small worlds to the default (every rank) and a symmetric run to the diffed rank', () => {
    expect(culpritPlan({ ...run, worldSize: 63, jitterPct: 5 })).toEqual({});
    expect(culpritPlan({ ...run, rank: 7 })).toEqual({ emitRanks: [7] });
  });

  it('emits every rank when they fit the event budget, the straggler and two others when not', () => {
    expect(culpritPlan({ ...run, straggler: 5 }).emitRanks).toHaveLength(64);
    expect(culpritPlan({ ...run, jitterPct: 5 }).emitRanks).toHaveLength(64);
    const big = { ...run, worldSize: 1024, nodes: CULPRIT_EVENT_BUDGET / 512 };
    expect(culpritPlan({ ...big, straggler: 5 })).toEqual({ emitRanks: [0, 1, 5] });
    expect(culpritPlan({ ...big, straggler: 0 })).toEqual({ emitRanks: [0, 1] });
  });

  it('says why when every rank differs (jitter, or a straggler on a mesh) and they do not fit', () => {
    const big = { ...run, worldSize: 1024, nodes: CULPRIT_EVENT_BUDGET / 512 };
    const j = culpritPlan({ ...big, jitterPct: 5 });
    expect(j.emitRanks).toEqual([0]);
    expect(j.skipped).toEqual({ why: 'jitter', ranks: 1024, events: 8000000, budget: CULPRIT_EVENT_BUDGET });
    const mesh = culpritPlan({ ...big, straggler: 5, oneDim: false });
    expect(mesh.skipped?.why).toBe('mesh');
  });
});

describe("a straggler's culprit from three ranks", () => {
  it('equals the culprit from all 64 ranks (rank, blame, worst collective)', () => {
    const cfg: SimConfig = { ...defaultConfig(), model: 'tiny', ranks: 64, straggler: { rank: 5, factor: 2 } };
    const graph = buildGraph(cfg);
    const culprit = (emitRanks: number[]) => {
      const r = runPipelineOnGraph(graph, cfg, 'aot_eager_autobucketing', { emitRanks });
      return findCulprit(r.sim.events, waitOfGraph(r.schedule.graph));
    };
    const all = culprit(Array.from({ length: 64 }, (_, k) => k));
    const three = culprit([0, 1, 5]);
    expect(all.ranks[0].rank).toBe(5);
    expect(three.ranks).toHaveLength(1);
    expect(three.ranks[0].rank).toBe(5);
    expect(three.ranks[0].collectives).toBe(all.ranks[0].collectives);
    expect(three.ranks[0].heldUpUs).toBeCloseTo(all.ranks[0].heldUpUs, 6);
    expect(three.worst).toEqual(all.worst);
  });
});

describe('fsdp-sim diff from 64 ranks up', () => {
  it('names the straggler at 64 ranks as at 63', async () => {
    for (const ranks of ['63', '64']) {
      const args = ['diff', '--model', 'tiny', '--ranks', ranks, '--straggler-rank', '5', '--straggler-factor', '2'];
      const r = await cli([...args, '--json']);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.out) as { culpritA: { ranks: { rank: number }[]; worst: { rank: number } } };
      expect(j.culpritA.ranks[0].rank, ranks).toBe(5);
      expect(j.culpritA.worst.rank, ranks).toBe(5);
    }
  });
});
