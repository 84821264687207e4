// Identity pin: a readable summary of everything the pipeline returns (schedule order, buckets,
// events, memory, metrics) for small presets, and a golden file per run with one line per
// collective (rank, name, start, duration, to the ns: test/fixtures/identity/), so a change that
// moves one collective fails on that line, and a change of summation order in the last bits does
// not. A deliberate change of results (a new graph from the builder, a new scheduling rule) must
// re-record these pins (`vitest -u`) and say why.
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

/** What a simulation produced: the step, the number of events, memory (the events: goldenLines). */
function simSummary(sim: SimResult) {
  return {
    stepUs: sim.stepUs,
    events: sim.events.length,
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

const COLLECTIVE_KINDS = new Set(['all_gather', 'reduce_scatter', 'all_reduce']);

/** One line per collective event: `r0 layers.0.attention.wq.all_gather 12.345 +6.789` (µs, to the ns). */
function goldenLines(sim: SimResult): string {
  const line = (e: SimResult['events'][number]) => `r${e.rank} ${e.name} ${e.start.toFixed(3)} +${e.dur.toFixed(3)}`;
  return `${sim.events.filter((e) => COLLECTIVE_KINDS.has(e.kind)).map(line).join('\n')}\n`;
}

/** Each run's collectives against its golden file, test/fixtures/identity/<pin>/<run>.txt. */
async function expectGolden(pin: string, sims: Readonly<Record<string, SimResult>>): Promise<void> {
  for (const [run, sim] of Object.entries(sims)) {
    await expect(goldenLines(sim)).toMatchFileSnapshot(`../../fixtures/identity/${pin}/${run}.txt`);
  }
}

async function allBackends(c: SimConfig, pin: string) {
  const graph = buildGraph(c);
  const runs = BACKEND_NAMES.map((b) => [b, runPipelineOnGraph(graph, c, b)] as const);
  await expectGolden(pin, Object.fromEntries(runs.map(([b, r]) => [b, r.sim])));
  return Object.fromEntries(runs.map(([b, r]) => [b, summarize(r)]));
}

describe('pipeline results (pinned)', () => {
  it('are unchanged for tiny × 4 (defaults) on every backend', async () => {
    expect(await allBackends(cfg({}), 'tiny-x4')).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 1152,
          "exposedCommUs": 1221.5914666666672,
          "memoryPeaks": "1147328×4",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 1147328,
          "schedulesPerRank": "shared",
          "stepUs": 1993.6557054726363,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×1",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 1068,
          "exposedCommUs": 644.40872039801,
          "memoryPeaks": "1182080×4",
          "mismatch": "none",
          "movedFromProgramOrder": 249,
          "nodes": 286,
          "overlapPct": 46.385271324960584,
          "peakMemoryBytes": 1182080,
          "schedulesPerRank": "shared",
          "stepUs": 1416.4729592039796,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 724,
          "exposedCommUs": 107.08938109452728,
          "memoryPeaks": "1438496×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 51.00934966604643,
          "peakMemoryBytes": 1438496,
          "schedulesPerRank": "shared",
          "stepUs": 774.9312079601991,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 720,
          "exposedCommUs": 83.18789651741284,
          "memoryPeaks": "1378880×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 61.943666975679655,
          "peakMemoryBytes": 1378880,
          "schedulesPerRank": "shared",
          "stepUs": 855.252135323383,
        },
      }
    `);
  });

  it('are unchanged for tiny × 8 with jitter, aligned and unaligned, and with a straggler', async () => {
    expect(await allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3 }), 'tiny-x8-jitter')).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 2304,
          "exposedCommUs": 1704.461263108218,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 2496.3625718508715,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×7",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 2126,
          "exposedCommUs": 933.645441050942,
          "memoryPeaks": "955264×8",
          "mismatch": "none",
          "movedFromProgramOrder": 244,
          "nodes": 274,
          "overlapPct": 38.32005448608032,
          "peakMemoryBytes": 955264,
          "schedulesPerRank": "shared",
          "stepUs": 1706.2803466493078,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1448,
          "exposedCommUs": 157.1013180966754,
          "memoryPeaks": "1209616×3 1210640×5",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 48.643115727592516,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": "shared",
          "stepUs": 828.0917952899537,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1448,
          "exposedCommUs": 133.90313467284528,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 56.2266703142866,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 908.789741972062,
        },
      }
    `);
    const unaligned = cfg({ ranks: 8, jitterPct: 5, seed: 3, alignment: false });
    expect(await allBackends(unaligned, 'tiny-x8-jitter-unaligned')).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 2304,
          "exposedCommUs": 1704.461263108218,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": 1,
          "stepUs": 2496.3625718508715,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×7",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 239,
          "exposedCommUs": 110.72860100113974,
          "memoryPeaks": "309728×1 314992×7",
          "mismatch": "#7 ranks 5≠1",
          "movedFromProgramOrder": 244,
          "nodes": 274,
          "overlapPct": 42.6782961639479,
          "peakMemoryBytes": 314992,
          "schedulesPerRank": 4,
          "stepUs": 211.72381221908105,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1448,
          "exposedCommUs": 157.1013180966754,
          "memoryPeaks": "1209616×3 1210640×5",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 48.643115727592516,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": 1,
          "stepUs": 828.0917952899537,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1448,
          "exposedCommUs": 133.90313467284528,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 56.2266703142866,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": 1,
          "stepUs": 908.789741972062,
        },
      }
    `);
    const straggler = cfg({ ranks: 8, straggler: { rank: 5, factor: 2 } });
    expect(await allBackends(straggler, 'tiny-x8-straggler')).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 2304,
          "exposedCommUs": 1642.1900444444452,
          "memoryPeaks": "937952×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 937952,
          "schedulesPerRank": "shared",
          "stepUs": 3185.806856384737,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×7",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 2129,
          "exposedCommUs": 980.1220480099519,
          "memoryPeaks": "955008×1 955264×7",
          "mismatch": "none",
          "movedFromProgramOrder": 244,
          "nodes": 274,
          "overlapPct": 32.73377127430258,
          "peakMemoryBytes": 955264,
          "schedulesPerRank": "shared",
          "stepUs": 2115.6798865671635,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1469,
          "exposedCommUs": 214.29884718076318,
          "memoryPeaks": "1209616×1 1210640×7",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 26.99087588757388,
          "peakMemoryBytes": 1210640,
          "schedulesPerRank": "shared",
          "stepUs": 1471.1172610281924,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1461,
          "exposedCommUs": 199.46574635157563,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 32.04434077390997,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1644.764382752902,
        },
      }
    `);
  });

  it('are unchanged for llama3-8b × 8 as the app compares it (no activation checkpointing, as pinned)', async () => {
    const { a, b } = compareBackends(cfg({ model: 'llama3-8b', ranks: 8, activationCheckpointing: 'none' }));
    await expectGolden('llama3-8b-x8', { a: a.sim, b: b.sim });
    expect({ a: summarize(a), b: summarize(b) }).toMatchInlineSnapshot(`
      {
        "a": {
          "bucketSizes": "",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 32544,
          "exposedCommUs": 176649.80479999233,
          "memoryPeaks": "52925274112×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "overlapPct": 0,
          "peakMemoryBytes": 52925274112,
          "schedulesPerRank": "shared",
          "stepUs": 1010289.2967952673,
        },
        "b": {
          "bucketSizes": "2×24 3×11 4×21 5×5 6×8 7×25",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 23040,
          "exposedCommUs": 7662.19851645772,
          "memoryPeaks": "56263365632×8",
          "mismatch": "none",
          "movedFromProgramOrder": 3242,
          "nodes": 3430,
          "overlapPct": 95.44497052231817,
          "peakMemoryBytes": 56263365632,
          "schedulesPerRank": "shared",
          "stepUs": 841301.690511731,
        },
      }
    `);
  });

  it('are unchanged for llama3-8b × 128 ranks through runBackend + simulate (rank 0 emitted)', async () => {
    const graph = buildStepGraph({ model: 'llama3-8b', worldSize: 128 });
    const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
    const runs = BACKEND_NAMES.map((b) => {
      const s = runBackend(b, graph, cost);
      return [b, s, simulate({ worldSize: 128, schedules: s, cost })] as const;
    });
    await expectGolden('llama3-8b-x128', Object.fromEntries(runs.map(([b, , sim]) => [b, sim])));
    const summary = (s: Schedule, sim: SimResult) => ({ ...scheduleSummary(s, graph), ...simSummary(sim) });
    const got = Object.fromEntries(runs.map(([b, s, sim]) => [b, summary(s, sim)]));
    expect(got).toMatchInlineSnapshot(`
      {
        "aot_eager": {
          "bucketSizes": "",
          "events": 4068,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "stepUs": 5666307.133182066,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "2×35",
          "events": 3867,
          "memoryPeaks": "42691609024×1",
          "mismatch": "none",
          "movedFromProgramOrder": 3763,
          "nodes": 3998,
          "stepUs": 4862738.559669402,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×96",
          "events": 2526,
          "memoryPeaks": "41632719232×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4754056.390833575,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×96",
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
