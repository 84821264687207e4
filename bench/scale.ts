// Bench 3: pass + simulation scale. Graph build, each backend and the simulator for llama3-8b,
// -70b and -405b on 8…1024 ranks, in Node. Baseline: one Kahn topological walk of the same graph
// (a linear-time pass), so "ratio" says how many linear walks the stage costs — it should stay
// flat as layers grow (linear in nodes) and flat as ranks grow (symmetric ranks simulated once).

import { buildStepGraph, topoOrder, type StepGraph } from '../src/graph';
import { AUTOBUCKETING_PROFILES, BACKEND_NAMES, runBackend } from '../src/backends';
import type { TorchProfile } from '../src/backends/autobucketing/options';
import { makeCostModel } from '../src/estimate';
import { simulate } from '../src/sim';
import { benchPassChains } from './pass_chain';
import { fmt, type Row } from './stats';
import { midpointMedian } from '../src/util';

const MODELS = ['llama3-8b', 'llama3-70b', 'llama3-405b'] as const;
const RANKS = [8, 64, 1024] as const;
const REPS = 5;

function timeMs(fn: () => void, reps = REPS): number {
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  return midpointMedian(ts);
}

/** Median ms of `fn` on a new input each repetition; making the input is not timed. */
function coldTimeMs<T>(make: () => T, fn: (input: T) => void, reps = REPS): number {
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const input = make();
    const t0 = performance.now();
    fn(input);
    ts.push(performance.now() - t0);
  }
  return midpointMedian(ts);
}

export interface ScaleRecord {
  model: string;
  ranks: number;
  nodes: number;
  buildMs: number;
  backendMs: Record<string, number>;
  simMs: Record<string, number>;
  totalMs: number; // build + slowest backend + its simulation
  kahnMs: number;
}

/** A backend's options under a torch profile: the profile's knobs for autobucketing, none for the rest. */
function optionsFor(backend: string, profile: TorchProfile | undefined) {
  return backend === 'aot_eager_autobucketing' && profile ? { ...AUTOBUCKETING_PROFILES[profile] } : undefined;
}

/** ` (torch 2.13 profile)` in a row's case when a profile is given. */
const profileNote = (profile: TorchProfile | undefined) => (profile ? ` (${profile.replace('-', ' ')} profile)` : '');

/** One model × ranks: build, each backend's pass and its simulation, and the row (a target on 405b × 1024). */
function scaleCase(model: (typeof MODELS)[number], ranks: number, profile?: TorchProfile): [ScaleRecord, Row] {
  let graph: StepGraph | undefined;
  const buildMs = timeMs(() => {
    graph = buildStepGraph({ model, worldSize: ranks });
  });
  const g = graph!;
  const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
  const kahnMs = timeMs(() => topoOrder(g));
  const backendMs: Record<string, number> = {};
  const simMs: Record<string, number> = {};
  for (const backend of BACKEND_NAMES) {
    const opts = optionsFor(backend, profile);
    let schedule = runBackend(backend, g, cost, opts);
    // a fresh graph per repetition: the pass's per-graph caches (pre-bucketing, its index) start
    // cold, as on a new model or mesh; the build itself is not timed here
    const fresh = () => buildStepGraph({ model, worldSize: ranks });
    backendMs[backend] = coldTimeMs(
      fresh,
      (f) => {
        schedule = runBackend(backend, f, cost, opts);
      },
      3,
    );
    simMs[backend] = timeMs(() => simulate({ worldSize: ranks, schedules: schedule, cost }), 3);
  }
  const totalMs = buildMs + Math.max(...BACKEND_NAMES.map((b) => backendMs[b] + simMs[b]));
  const ab = 'aot_eager_autobucketing';
  const targeted = model === 'llama3-405b' && ranks === 1024;
  const row: Row = {
    section: 'scale',
    case: `${model} × ${ranks} ranks (${g.nodes.length} nodes)${profileNote(profile)}`,
    value: `build ${fmt(buildMs, 1)} + autobucket ${fmt(backendMs[ab], 1)} + sim ${fmt(simMs[ab], 1)} ms; ${fmt(g.nodes.length / (totalMs / 1000) / 1e3, 0)}k nodes/s`,
    baseline: `kahn walk ${fmt(kahnMs, 2)} ms`,
    ratio: `${fmt(totalMs / kahnMs, 0)}× walk`,
    target: targeted ? 'total < 1000 ms' : '',
    met: targeted ? totalMs < 1000 : null,
  };
  return [{ model, ranks, nodes: g.nodes.length, buildMs, backendMs, simMs, totalMs, kahnMs }, row];
}

/** `--only scale405`: the two rows with the 1 s target, llama3-405b × 1024 ranks, 1-D and FSDP 128 × TP 8. */
export function benchScale405(profile?: TorchProfile): { rows: Row[]; records: ScaleRecord[] } {
  const [record, row] = scaleCase('llama3-405b', 1024, profile);
  return { rows: [row, meshRow(profile)], records: [record] };
}

export function benchScale(profile?: TorchProfile): { rows: Row[]; records: ScaleRecord[] } {
  const records: ScaleRecord[] = [];
  const rows: Row[] = [];
  for (const model of MODELS) {
    for (const ranks of RANKS) {
      const [record, row] = scaleCase(model, ranks, profile);
      records.push(record);
      rows.push(row);
    }
  }
  // Growth: ms per node across models (linear in nodes) and 1024 vs 8 ranks (flat in ranks).
  const per = (m: string, r: number) => records.find((x) => x.model === m && x.ranks === r)!;
  const lin =
    per('llama3-405b', 8).totalMs /
    per('llama3-405b', 8).nodes /
    (per('llama3-8b', 8).totalMs / per('llama3-8b', 8).nodes);
  const flat = per('llama3-405b', 1024).totalMs / per('llama3-405b', 8).totalMs;
  rows.push({
    section: 'scale',
    case: 'growth in nodes (405b vs 8b, ms/node)',
    value: fmt(lin, 2),
    baseline: '1.00 = linear',
    ratio: `${fmt(lin, 2)}×`,
    target: '≈ 1 (≤ 2)',
    met: lin <= 2,
  });
  rows.push({
    section: 'scale',
    case: 'growth in ranks (405b: 1024 vs 8)',
    value: fmt(flat, 2),
    baseline: '1.00 = flat',
    ratio: `${fmt(flat, 2)}×`,
    target: '≈ 1 (≤ 2)',
    met: flat <= 2,
  });
  rows.push(meshRow(profile));
  rows.push(...benchPassChains());
  return { rows, records };
}

/**
 * llama3-405b on 1024 ranks as FSDP 128 × TP 8 (the mesh torchtitan runs): build + pass + simulate,
 * as the other rows count it (build + the slowest backend + its simulation; issue 11's target),
 * with each backend's pass + simulation listed.
 */
export function meshRow(profile?: TorchProfile): Row {
  const mesh = { dpReplicate: 1, dpShard: 128, tp: 8 };
  const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
  let g: StepGraph | undefined;
  const buildMs = timeMs(() => {
    g = buildStepGraph({ model: 'llama3-405b', worldSize: 1024, mesh });
  }, 3);
  const kahnMs = timeMs(() => topoOrder(g!));
  const stageMs: Record<string, number> = {};
  for (const backend of BACKEND_NAMES) {
    const opts = optionsFor(backend, profile);
    let schedule = runBackend(backend, g!, cost, opts);
    const fresh = () => buildStepGraph({ model: 'llama3-405b', worldSize: 1024, mesh });
    const passMs = coldTimeMs(
      fresh,
      (f) => {
        schedule = runBackend(backend, f, cost, opts);
      },
      3,
    );
    stageMs[backend] = passMs + timeMs(() => simulate({ worldSize: 1024, schedules: schedule, cost }), 3);
  }
  const slowest = BACKEND_NAMES.reduce((a, b) => (stageMs[b] > stageMs[a] ? b : a));
  const totalMs = buildMs + stageMs[slowest];
  const each = BACKEND_NAMES.map((b) => `${b} ${fmt(stageMs[b], 0)}`).join(', ');
  return {
    section: 'scale',
    case:
      `llama3-405b × 1024 ranks as FSDP 128 × TP 8 (${g!.nodes.length} nodes): build + pass + sim` +
      profileNote(profile),
    value:
      `build ${fmt(buildMs, 0)} + ${slowest} pass + sim ${fmt(stageMs[slowest], 0)} = ${fmt(totalMs, 0)} ms ` +
      `(pass + sim: ${each})`,
    baseline: `kahn walk ${fmt(kahnMs, 2)} ms`,
    ratio: `${fmt(totalMs / kahnMs, 0)}× walk`,
    target: 'total < 1000 ms',
    met: totalMs < 1000,
  };
}
