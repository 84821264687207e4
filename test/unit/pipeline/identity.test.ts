// Identity pin: SHA-256 of everything the pipeline returns (schedules, events, memory curves,
// metrics, step time) for small presets, recorded from the code as it was before the performance
// work. Optimisations must not change a single bit; a deliberate change of results (a new graph
// from the builder, a new scheduling rule) must re-record these hashes and say why.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateConfig, type SimConfig } from '../../../src/config';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { compareBackends, runPipelineOnGraph, buildGraph, type PipelineResult } from '../../../src/pipeline';
import { simulate } from '../../../src/sim';

function cfg(partial: Record<string, unknown>): SimConfig {
  const r = validateConfig(partial);
  if (!r.ok) throw r.error;
  return r.value;
}

const sha = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

const hashRun = (r: PipelineResult) =>
  sha({ schedule: r.schedule, schedules: r.schedules ?? null, sim: r.sim, metrics: r.metrics, label: r.costLabel });

function allBackends(c: SimConfig): Record<string, string> {
  const graph = buildGraph(c);
  return Object.fromEntries(BACKEND_NAMES.map((b) => [b, hashRun(runPipelineOnGraph(graph, c, b))]));
}

describe('pipeline results (pinned)', () => {
  it('are unchanged for tiny × 4 (defaults) on every backend', () => {
    expect(allBackends(cfg({}))).toMatchInlineSnapshot(`
      {
        "aot_eager": "ceac35b30cae7104",
        "aot_eager_autobucketing": "820e0f2da8df26ed",
        "transformer_block": "99c0d6b943d1db6b",
      }
    `);
  });

  it('are unchanged for tiny × 8 with jitter, aligned and unaligned, and with a straggler', () => {
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3 }))).toMatchInlineSnapshot(`
      {
        "aot_eager": "df6eb4c528c35170",
        "aot_eager_autobucketing": "12637bb909152ee0",
        "transformer_block": "b601909d62049d3e",
      }
    `);
    expect(allBackends(cfg({ ranks: 8, jitterPct: 5, seed: 3, alignment: false }))).toMatchInlineSnapshot(`
      {
        "aot_eager": "bd574aa3616a9502",
        "aot_eager_autobucketing": "40acc0b75f862047",
        "transformer_block": "fd1b85e6b6a78d57",
      }
    `);
    expect(allBackends(cfg({ ranks: 8, straggler: { rank: 5, factor: 2 } }))).toMatchInlineSnapshot(`
      {
        "aot_eager": "bd639f09bd3700fc",
        "aot_eager_autobucketing": "5c64c8cdcbd320af",
        "transformer_block": "f5e2e34ccbe8d394",
      }
    `);
  });

  it('are unchanged for llama3-8b × 8 as the app compares it (without activation checkpointing, as pinned)', () => {
    const { a, b } = compareBackends(cfg({ model: 'llama3-8b', ranks: 8, activationCheckpointing: 'none' }));
    expect({ a: hashRun(a), b: hashRun(b) }).toMatchInlineSnapshot(`
      {
        "a": "ae10aa0c18666d51",
        "b": "f8e8d4cf61f8790c",
      }
    `);
  });

  it('are unchanged for llama3-8b × 128 ranks through runBackend + simulate (rank 0 emitted)', () => {
    const graph = buildStepGraph({ model: 'llama3-8b', worldSize: 128 });
    const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
    const got = Object.fromEntries(BACKEND_NAMES.map((b) => {
      const s = runBackend(b, graph, cost);
      return [b, sha({ s, sim: simulate({ worldSize: 128, schedules: s, cost }) })];
    }));
    expect(got).toMatchInlineSnapshot(`
      {
        "aot_eager": "708d209886fa7687",
        "aot_eager_autobucketing": "729db3ef77716c6b",
        "transformer_block": "cc54688c09a9650a",
      }
    `);
  });
});
