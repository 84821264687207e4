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
  return `${sim.events
    .filter((e) => COLLECTIVE_KINDS.has(e.kind))
    .map(line)
    .join('\n')}\n`;
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
          "exposedCommUs": 25.559213054726342,
          "memoryPeaks": "1378880×4",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 88.30731435015166,
          "peakMemoryBytes": 1378880,
          "schedulesPerRank": "shared",
          "stepUs": 914.1682555665741,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring",
          "events": 880,
          "exposedCommUs": 25.559213054726342,
          "memoryPeaks": "1352192×4",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 88.30731435015166,
          "peakMemoryBytes": 1352192,
          "schedulesPerRank": "shared",
          "stepUs": 1001.0428228043968,
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
          "exposedCommUs": 51.380172346072456,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 83.2036701089306,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 952.45988812008,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, aligned (median)",
          "events": 1760,
          "exposedCommUs": 48.791529562013096,
          "memoryPeaks": "1134592×8",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 84.04990507050952,
          "peakMemoryBytes": 1134592,
          "schedulesPerRank": "shared",
          "stepUs": 1014.7498549138827,
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
          "exposedCommUs": 51.380172346072456,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 83.2036701089306,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": 1,
          "stepUs": 952.45988812008,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring ±5%, unaligned",
          "events": 1760,
          "exposedCommUs": 48.791529562013096,
          "memoryPeaks": "1134592×8",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 84.04990507050952,
          "peakMemoryBytes": 1134592,
          "schedulesPerRank": 1,
          "stepUs": 1014.7498549138827,
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
          "events": 1806,
          "exposedCommUs": 138.37767913946936,
          "memoryPeaks": "1147936×8",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 52.856334583260015,
          "peakMemoryBytes": 1147936,
          "schedulesPerRank": "shared",
          "stepUs": 1744.0437779211593,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×6",
          "costModel": "h100 achieved bf16 + nvlink-ib ring straggler rank 5 ×2, aligned (median)",
          "events": 1795,
          "exposedCommUs": 155.82286230663365,
          "memoryPeaks": "1134592×1 1213728×7",
          "mismatch": "none",
          "movedFromProgramOrder": 165,
          "nodes": 186,
          "overlapPct": 46.91296363296666,
          "peakMemoryBytes": 1213728,
          "schedulesPerRank": "shared",
          "stepUs": 1939.7159205408336,
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
          "movedFromProgramOrder": 2325,
          "nodes": 2526,
          "stepUs": 4753517.4002902955,
        },
        "transformer_block": {
          "bucketSizes": "2×3 9×96",
          "events": 3139,
          "memoryPeaks": "42072359424×1",
          "mismatch": "none",
          "movedFromProgramOrder": 2325,
          "nodes": 2526,
          "stepUs": 4753517.4002902955,
        },
      }
    `);
  });
});
