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
import type { SimResult } from '../../../src/sim/sim_types';
import type { Schedule } from '../../../src/backends/schedule_types';
import type { StepGraph } from '../../../src/graph/types';
import { fixturePath } from '../../helpers/fixtures';

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
    await expect(goldenLines(sim)).toMatchFileSnapshot(fixturePath('identity', pin, `${run}.txt`));
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
          "exposedCommUs": 1221.591466666667,
          "memoryPeaks": "1147328×4",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 288,
          "overlapPct": 0,
          "peakMemoryBytes": 1147328,
          "schedulesPerRank": "shared",
          "stepUs": 1993.655705472636,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "20×1 21×2",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 848,
          "exposedCommUs": 51.37542087960202,
          "memoryPeaks": "1455328×4",
          "mismatch": "none",
          "movedFromProgramOrder": 163,
          "nodes": 170,
          "overlapPct": 16.132898467465573,
          "peakMemoryBytes": 1455328,
          "schedulesPerRank": "shared",
          "stepUs": 993.8194706467661,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 896,
          "exposedCommUs": 104.80747972139304,
          "memoryPeaks": "1370656×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 52.053261126969986,
          "peakMemoryBytes": 1370656,
          "schedulesPerRank": "shared",
          "stepUs": 959.4316739833213,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 892,
          "exposedCommUs": 80.14764815920395,
          "memoryPeaks": "1378880×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 63.33450276838926,
          "peakMemoryBytes": 1378880,
          "schedulesPerRank": "shared",
          "stepUs": 1046.954038199248,
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
          "stepUs": 2497.491099309288,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "20×1 21×2",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1696,
          "exposedCommUs": 79.78772387022909,
          "memoryPeaks": "1215152×8",
          "mismatch": "none",
          "movedFromProgramOrder": 163,
          "nodes": 170,
          "overlapPct": 6.968755266829528,
          "peakMemoryBytes": 1215152,
          "schedulesPerRank": "shared",
          "stepUs": 1025.1518124808888,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1792,
          "exposedCommUs": 158.71377354100042,
          "memoryPeaks": "1143808×4 1143824×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 48.1159992867384,
          "peakMemoryBytes": 1143824,
          "schedulesPerRank": "shared",
          "stepUs": 1011.6935485144386,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1791,
          "exposedCommUs": 131.1637110043701,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 57.12219599172489,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1092.5890526034825,
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
          "stepUs": 2497.491099309288,
        },
        "aot_eager_autobucketing": {
          "bucketSizes": "20×1 21×2",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1696,
          "exposedCommUs": 79.78772387022909,
          "memoryPeaks": "1215152×8",
          "mismatch": "none",
          "movedFromProgramOrder": 163,
          "nodes": 170,
          "overlapPct": 6.968755266829528,
          "peakMemoryBytes": 1215152,
          "schedulesPerRank": 1,
          "stepUs": 1025.1518124808888,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1792,
          "exposedCommUs": 158.71377354100042,
          "memoryPeaks": "1143808×4 1143824×4",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 48.1159992867384,
          "peakMemoryBytes": 1143824,
          "schedulesPerRank": 1,
          "stepUs": 1011.6935485144386,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1791,
          "exposedCommUs": 131.1637110043701,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 57.12219599172489,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": 1,
          "stepUs": 1092.5890526034825,
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
          "bucketSizes": "20×1 21×2",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1696,
          "exposedCommUs": 79.88987595356541,
          "memoryPeaks": "1215152×8",
          "mismatch": "none",
          "movedFromProgramOrder": 163,
          "nodes": 170,
          "overlapPct": 2.53507560933267,
          "peakMemoryBytes": 1215152,
          "schedulesPerRank": "shared",
          "stepUs": 1946.5788311774452,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1813,
          "exposedCommUs": 218.16481980746406,
          "memoryPeaks": "1143824×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 25.673783989828138,
          "peakMemoryBytes": 1143824,
          "schedulesPerRank": "shared",
          "stepUs": 1818.708363587724,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1812,
          "exposedCommUs": 215.49745514096207,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 164,
          "nodes": 186,
          "overlapPct": 26.582524099967337,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1999.1529956647935,
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
          "memoryPeaks": "52989499392×8",
          "mismatch": "none",
          "movedFromProgramOrder": 0,
          "nodes": 4068,
          "overlapPct": 0,
          "peakMemoryBytes": 52989499392,
          "schedulesPerRank": "shared",
          "stepUs": 1010289.2967952673,
        },
        "b": {
          "bucketSizes": "2×110 3×12 5×1 6×38 7×7 8×5 9×12 12×1",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 26320,
          "exposedCommUs": 7704.71785678537,
          "memoryPeaks": "56821856256×8",
          "mismatch": "none",
          "movedFromProgramOrder": 2670,
          "nodes": 3044,
          "overlapPct": 95.27637417484478,
          "peakMemoryBytes": 56821856256,
          "schedulesPerRank": "shared",
          "stepUs": 887683.1025011048,
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
          "bucketSizes": "2×63 3×32 4×2 5×30 6×1 7×63 9×1",
          "events": 3422,
          "memoryPeaks": "42691600768×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2396,
          "nodes": 2780,
          "stepUs": 4784080.398750003,
        },
        "fsdp2_eager": {
          "bucketSizes": "2×3 9×96",
          "events": 3139,
          "memoryPeaks": "42072359424×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4778432.373614685,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×96",
          "events": 3139,
          "memoryPeaks": "42072359424×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2324,
          "nodes": 2526,
          "stepUs": 4778432.373614685,
        },
      }
    `);
  });
});
