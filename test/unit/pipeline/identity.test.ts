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
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 1105302.1806487555,
          "events": 1152,
          "exposedCommUs": 1221.5914666666672,
          "memoryPeaks": "1147328×4",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 1147328,
          "schedulesPerRank": "shared",
          "stepUs": 1881.1116099502483,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×3",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 760726.8624398012,
          "events": 1088,
          "exposedCommUs": 712.6345870646765,
          "memoryPeaks": "1182080×4",
          "mismatch": "none",
          "movedFromProgramOrder": 238,
          "nodes": 282,
          "overlapPct": 38.70292295298601,
          "peakMemoryBytes": 1182080,
          "schedulesPerRank": "shared",
          "stepUs": 1372.1547303482582,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 230731.75496915414,
          "events": 728,
          "exposedCommUs": 110.66778507462675,
          "memoryPeaks": "1438496×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 49.372321453249725,
          "peakMemoryBytes": 1438496,
          "schedulesPerRank": "shared",
          "stepUs": 665.9655164179106,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 268373.1551363182,
          "events": 720,
          "exposedCommUs": 83.18789651741284,
          "memoryPeaks": "1378880×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 61.943666975679655,
          "peakMemoryBytes": 1378880,
          "schedulesPerRank": "shared",
          "stepUs": 742.7080398009953,
        },
      }
    `);
  });

  it('are unchanged for tiny × 8 with jitter, aligned and unaligned, and with a straggler', () => {
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3 }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 2820863.0689042592,
          "events": 2304,
          "exposedCommUs": 1704.4612631082184,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 2379.723625636935,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×4 4×1",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 1977008.1860866048,
          "events": 2168,
          "exposedCommUs": 1079.9447266272564,
          "memoryPeaks": "955264×8",
          "mismatch": "none",
          "movedFromProgramOrder": 235,
          "nodes": 274,
          "overlapPct": 28.66482858186802,
          "peakMemoryBytes": 955264,
          "schedulesPerRank": "shared",
          "stepUs": 1740.575302242424,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 512545.6286398359,
          "events": 1456,
          "exposedCommUs": 167.8529620008619,
          "memoryPeaks": "1209616×3 1210640×5",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 45.12837162222702,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": "shared",
          "stepUs": 725.7272128738754,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "eventStartSumUs": 580990.8304465121,
          "events": 1448,
          "exposedCommUs": 132.28922222449552,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 56.75426305405401,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 794.1932352968427,
        },
      }
    `);
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3, alignment: false }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 2820863.0689042592,
          "events": 2304,
          "exposedCommUs": 1704.4612631082184,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": 1,
          "stepUs": 2379.723625636935,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×4 4×1",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 309364.12342372193,
          "events": 848,
          "exposedCommUs": 487.7982646881659,
          "memoryPeaks": "401888×8",
          "mismatch": "#23 ranks 1≠2",
          "movedFromProgramOrder": 235,
          "nodes": 274,
          "overlapPct": 23.084724025271235,
          "peakMemoryBytes": 401888,
          "schedulesPerRank": 5,
          "stepUs": 733.5447711562596,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 512545.6286398359,
          "events": 1456,
          "exposedCommUs": 167.8529620008619,
          "memoryPeaks": "1209616×3 1210640×5",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 45.12837162222702,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": 1,
          "stepUs": 725.7272128738754,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "eventStartSumUs": 580990.8304465121,
          "events": 1448,
          "exposedCommUs": 132.28922222449552,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 56.75426305405401,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": 1,
          "stepUs": 794.1932352968427,
        },
      }
    `);
    expect(allBackends(cfg({ ranks: 8, straggler: { rank: 5, factor: 2 } }))).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 3429781.6926381458,
          "events": 2304,
          "exposedCommUs": 1642.190044444444,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 2960.7186653399617,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×4 3×1",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 2146023.584342288,
          "events": 2175,
          "exposedCommUs": 1101.7295364013285,
          "memoryPeaks": "955008×1 955264×7",
          "mismatch": "none",
          "movedFromProgramOrder": 237,
          "nodes": 276,
          "overlapPct": 25.735613411657287,
          "peakMemoryBytes": 955264,
          "schedulesPerRank": "shared",
          "stepUs": 1992.3047880597017,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 775165.4540577137,
          "events": 1462,
          "exposedCommUs": 200.44786417910473,
          "memoryPeaks": "1209616×1 1210640×7",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 31.709744655888777,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": "shared",
          "stepUs": 1246.0290699834163,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "eventStartSumUs": 917172.4335131007,
          "events": 1468,
          "exposedCommUs": 208.5467685737977,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 28.95054215010931,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1419.6761917081265,
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
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 16572775213.15835,
          "events": 32544,
          "exposedCommUs": 176649.804799993,
          "memoryPeaks": "52925274112×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "overlapPct": 0,
          "peakMemoryBytes": 52925274112,
          "schedulesPerRank": "shared",
          "stepUs": 980540.7762937748,
        },
        "b": {
          "bucketSizes": "2×19 3×10 4×22 5×6 6×9 7×24",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "eventStartSumUs": 9639426164.193216,
          "events": 23048,
          "exposedCommUs": 7662.198516457749,
          "memoryPeaks": "56263365632×8",
          "mismatch": "none",
          "movedFromProgramOrder": 3252,
          "nodes": 3432,
          "overlapPct": 95.44568649287459,
          "peakMemoryBytes": 56263365632,
          "schedulesPerRank": "shared",
          "stepUs": 811553.1700102376,
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
          "eventStartSumUs": 11596389506.64635,
          "events": 4068,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "stepUs": 5636558.612680574,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×35",
          "eventStartSumUs": 9311171452.5315,
          "events": 3867,
          "memoryPeaks": "42691609024×1",
          "mismatch": "none",
          "movedFromProgramOrder": 3763,
          "nodes": 3998,
          "stepUs": 4862738.559669402,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×96",
          "eventStartSumUs": 6120666497.673843,
          "events": 2526,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4754056.390833575,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×96",
          "eventStartSumUs": 6120723863.293747,
          "events": 2526,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4754056.390833575,
        },
      }
    `);
  });
});
