// Identity pin: a readable summary of everything the pipeline returns (schedule order, buckets,
// events, memory, metrics) for small presets. Each figure is kept at full precision, so an
// optimisation that changes a single event time changes `eventStartSumUs` and the failure says
// which figure moved; a deliberate change of results (a new graph from the builder, a new
// scheduling rule) must re-record these pins (`vitest -u`) and say why.
import { describe, expect, it } from 'vitest';
import { validateConfig, type SimConfig } from '../../../src/config';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { compareBackends, runPipelineOnGraph, buildGraph, type PipelineResult } from '../../../src/pipeline';
import { simulate } from '../../../src/sim';
import type { SimResult } from '../../../src/sim/types';
import type { Schedule } from '../../../src/backends/types';
import type { StepGraph } from '../../../src/graph/types';

function cfg(partial: Record<string, unknown>): SimConfig {
  const r = validateConfig(partial);
  if (!r.ok) throw r.error;
  return r.value;
}

/** `a×3 b×1`: each distinct value with its count, in order of value (a short, readable multiset). */
function tally(values: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => a[0] - b[0])
    .map(([v, n]) => `${v}×${n}`)
    .join(' ');
}

/** What a schedule did: nodes moved from program order, buckets and their sizes. */
function scheduleSummary(s: Schedule, program: StepGraph) {
  const pos = new Map(program.nodes.map((n, i) => [n.name, i]));
  const order = s.graph.nodes;
  return {
    nodes: order.length,
    movedFromProgramOrder: order.filter((n, i) => pos.has(n.name) && pos.get(n.name) !== i).length,
    bucketSizes: tally(s.buckets.map((b) => b.members.length)),
  };
}

/** What a simulation produced: the step, the events (count and the sum of their start times), memory. */
function simSummary(sim: SimResult) {
  return {
    stepUs: sim.stepUs,
    events: sim.events.length,
    eventStartSumUs: sim.events.reduce((t, e) => t + e.start, 0),
    memoryPeaks: tally(sim.memory.map((m) => m.peakBytes)),
    mismatch: sim.mismatch ? `#${sim.mismatch.seq} ranks ${sim.mismatch.ranks.join('≠')}` : 'none',
  };
}

const summarize = (r: PipelineResult) => ({
  costModel: r.costLabel,
  ...scheduleSummary(r.schedule, r.graph),
  schedulesPerRank: r.schedules
    ? new Set(r.schedules.map((s) => s.graph.nodes.map((n) => n.name).join())).size
    : 'shared',
  ...simSummary(r.sim),
  exposedCommUs: r.metrics.exposedCommUs,
  overlapPct: r.metrics.overlapPct,
  peakMemoryBytes: r.metrics.peakMemoryBytes,
});

function allBackends(c: SimConfig) {
  const graph = buildGraph(c);
  return Object.fromEntries(BACKEND_NAMES.map((b) => [b, summarize(runPipelineOnGraph(graph, c, b))]));
}

describe('pipeline results (pinned)', () => {
  it('are unchanged for tiny × 4 (defaults) on every backend', () => {
    expect(allBackends(cfg({}))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 roofline bf16 + nvlink-ib ring",
          "eventStartSumUs": 473524.19293771137,
          "events": 1152,
          "exposedCommUs": 188.25813333333326,
          "memoryPeaks": "1147328×4",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 1147328,
          "schedulesPerRank": "shared",
          "stepUs": 846.56591721393,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×1 3×1 5×1 11×3",
          "costModel": "h100 roofline bf16 + nvlink-ib ring",
          "eventStartSumUs": 253039.82742447758,
          "events": 760,
          "exposedCommUs": 3.0855999999999995,
          "memoryPeaks": "1410112×4",
          "mismatch": "none",
          "movedFromProgramOrder": 201,
          "nodes": 214,
          "overlapPct": 96.00611629239467,
          "peakMemoryBytes": 1410112,
          "schedulesPerRank": "shared",
          "stepUs": 661.3933838805968,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 roofline bf16 + nvlink-ib ring",
          "eventStartSumUs": 233108.6431395024,
          "events": 712,
          "exposedCommUs": 9.27333333333332,
          "memoryPeaks": "1352192×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 73.69873995976342,
          "peakMemoryBytes": 1352192,
          "schedulesPerRank": "shared",
          "stepUs": 667.5811172139302,
        },
      }
    `);
  });

  it('are unchanged for tiny × 8 with jitter, aligned and unaligned, and with a straggler', () => {
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3 }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 1289570.2523782982,
          "events": 2304,
          "exposedCommUs": 453.1880847478577,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 1127.263684243331,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×1 3×1 4×1 8×1 11×2",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 533236.7573833297,
          "events": 1576,
          "exposedCommUs": 19.831944187547688,
          "memoryPeaks": "1200736×2 1241088×6",
          "mismatch": "none",
          "movedFromProgramOrder": 209,
          "nodes": 222,
          "overlapPct": 90.68882944485176,
          "peakMemoryBytes": 1241088,
          "schedulesPerRank": "shared",
          "stepUs": 679.2543839211507,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 484537.8933997339,
          "events": 1432,
          "exposedCommUs": 26.05450875715785,
          "memoryPeaks": "1134592×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 68.60454062156465,
          "peakMemoryBytes": 1134592,
          "schedulesPerRank": "shared",
          "stepUs": 687.7012722598696,
        },
      }
    `);
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3, alignment: false }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 1289570.2523782982,
          "events": 2304,
          "exposedCommUs": 453.1880847478577,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": 1,
          "stepUs": 1127.263684243331,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×2 3×3 4×1 7×1 8×2 9×1",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 6984.334471183956,
          "events": 179,
          "exposedCommUs": 14.523364341876832,
          "memoryPeaks": "267872×7 376576×1",
          "mismatch": "#3 ranks 5≠6",
          "movedFromProgramOrder": 186,
          "nodes": 210,
          "overlapPct": 34.465784483001336,
          "peakMemoryBytes": 376576,
          "schedulesPerRank": 6,
          "stepUs": 91.22034942484267,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 roofline bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 484537.8933997339,
          "events": 1432,
          "exposedCommUs": 26.05450875715785,
          "memoryPeaks": "1134592×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 68.60454062156465,
          "peakMemoryBytes": 1134592,
          "schedulesPerRank": 1,
          "stepUs": 687.7012722598696,
        },
      }
    `);
    expect(allBackends(cfg({ ranks: 8, straggler: { rank: 5, factor: 2 } }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 roofline bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 1954405.8747758565,
          "events": 2304,
          "exposedCommUs": 436.6344888888894,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 1752.8407241127702,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×1 3×1 5×1 10×2 11×1",
          "costModel": "h100 roofline bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 872091.8974047112,
          "events": 1683,
          "exposedCommUs": 136.94660000000016,
          "memoryPeaks": "1200736×1 1245456×7",
          "mismatch": "none",
          "movedFromProgramOrder": 205,
          "nodes": 218,
          "overlapPct": 28.537602602732598,
          "peakMemoryBytes": 1245456,
          "schedulesPerRank": "shared",
          "stepUs": 1323.306101890548,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 roofline bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 824373.2670224872,
          "events": 1459,
          "exposedCommUs": 53.376049999999786,
          "memoryPeaks": "1134592×1 1147936×7",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 32.97370179084891,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1337.5251241127703,
        },
      }
    `);
  });

  it('are unchanged for llama3-8b × 8 as the app compares it (without activation checkpointing, as pinned)', () => {
    const { a, b } = compareBackends(cfg({ model: 'llama3-8b', ranks: 8, activationCheckpointing: 'none' }));
    expect({ a: summarize(a), b: summarize(b) }).toMatchInlineSnapshot(`
      {
        "a": {
          "bucketSizes": "",
          "costModel": "h100 roofline bf16 + nvlink-ib ring",
          "eventStartSumUs": 11346361079.060808,
          "events": 32544,
          "exposedCommUs": 159694.2492444455,
          "memoryPeaks": "52925274112×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "overlapPct": 0,
          "peakMemoryBytes": 52925274112,
          "schedulesPerRank": "shared",
          "stepUs": 670648.6393447025,
        },
        "b": {
          "bucketSizes": "2×49 3×18 4×12 5×21 6×13 7×4 8×4 9×4 10×3 11×2",
          "costModel": "h100 roofline bf16 + nvlink-ib ring",
          "eventStartSumUs": 6134142638.825366,
          "events": 22408,
          "exposedCommUs": 14726.322481944604,
          "memoryPeaks": "55452524544×8",
          "mismatch": "none",
          "movedFromProgramOrder": 3005,
          "nodes": 3266,
          "overlapPct": 90.61343572988538,
          "peakMemoryBytes": 55452524544,
          "schedulesPerRank": "shared",
          "stepUs": 525680.7125822017,
        },
      }
    `);
  });

  it('are unchanged for llama3-8b × 128 ranks through runBackend + simulate (rank 0 emitted)', () => {
    const graph = buildStepGraph({ model: 'llama3-8b', worldSize: 128 });
    const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
    const got = Object.fromEntries(
      BACKEND_NAMES.map((b) => {
        const s = runBackend(b, graph, cost);
        return [b, { ...scheduleSummary(s, graph), ...simSummary(simulate({ worldSize: 128, schedules: s, cost })) }];
      }),
    );
    expect(got).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "eventStartSumUs": 10982125462.284655,
          "events": 4068,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "stepUs": 5346403.559072156,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×130",
          "eventStartSumUs": 8983648847.88877,
          "events": 3706,
          "memoryPeaks": "42920092160×1",
          "mismatch": "none",
          "movedFromProgramOrder": 3536,
          "nodes": 3808,
          "stepUs": 4832448.939418949,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×96",
          "eventStartSumUs": 6088024691.950243,
          "events": 2526,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4737569.0559150465,
        },
      }
    `);
  });
});
