// Bench 3: pass + simulation scale. Graph build, each backend and the simulator for llama3-8b,
// -70b and -405b on 8…1024 ranks, in Node. Baseline: one Kahn topological walk of the same graph
// (a linear-time pass), so "ratio" says how many linear walks the stage costs — it should stay
// flat as layers grow (linear in nodes) and flat as ranks grow (symmetric ranks simulated once).

import { buildStepGraph, topoOrder, type StepGraph } from '../src/graph';
import { BACKEND_NAMES, runBackend } from '../src/backends';
import { makeCostModel } from '../src/estimate';
import { simulate } from '../src/sim';
import { benchPassChains } from './pass_chain';
import { fmt, median, type Row } from './stats';

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
  return median(ts);
}

export interface ScaleRecord {
  model: string; ranks: number; nodes: number;
  buildMs: number; backendMs: Record<string, number>; simMs: Record<string, number>;
  totalMs: number; // build + slowest backend + its simulation
  kahnMs: number;
}

export function benchScale(): { rows: Row[]; records: ScaleRecord[] } {
  const records: ScaleRecord[] = [];
  const rows: Row[] = [];
  for (const model of MODELS) {
    for (const ranks of RANKS) {
      let graph: StepGraph | undefined;
      const buildMs = timeMs(() => { graph = buildStepGraph({ model, worldSize: ranks }); });
      const g = graph!;
      const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
      const kahnMs = timeMs(() => topoOrder(g));
      const backendMs: Record<string, number> = {};
      const simMs: Record<string, number> = {};
      for (const backend of BACKEND_NAMES) {
        let schedule = runBackend(backend, g, cost);
        backendMs[backend] = timeMs(() => { schedule = runBackend(backend, g, cost); }, 3);
        simMs[backend] = timeMs(() => simulate({ worldSize: ranks, schedules: schedule, cost }), 3);
      }
      const totalMs = buildMs + Math.max(...BACKEND_NAMES.map((b) => backendMs[b] + simMs[b]));
      records.push({ model, ranks, nodes: g.nodes.length, buildMs, backendMs, simMs, totalMs, kahnMs });
      const ab = 'aot_eager_autobucketing';
      rows.push({
        section: 'scale',
        case: `${model} × ${ranks} ranks (${g.nodes.length} nodes)`,
        value: `build ${fmt(buildMs, 1)} + autobucket ${fmt(backendMs[ab], 1)} + sim ${fmt(simMs[ab], 1)} ms; ${fmt(g.nodes.length / (totalMs / 1000) / 1e3, 0)}k nodes/s`,
        baseline: `kahn walk ${fmt(kahnMs, 2)} ms`,
        ratio: `${fmt(totalMs / kahnMs, 0)}× walk`,
        target: model === 'llama3-405b' && ranks === 1024 ? 'total < 1000 ms' : '',
        met: model === 'llama3-405b' && ranks === 1024 ? totalMs < 1000 : null,
      });
    }
  }
  // Growth: ms per node across models (linear in nodes) and 1024 vs 8 ranks (flat in ranks).
  const per = (m: string, r: number) => records.find((x) => x.model === m && x.ranks === r)!;
  const lin = per('llama3-405b', 8).totalMs / per('llama3-405b', 8).nodes / (per('llama3-8b', 8).totalMs / per('llama3-8b', 8).nodes);
  const flat = per('llama3-405b', 1024).totalMs / per('llama3-405b', 8).totalMs;
  rows.push({ section: 'scale', case: 'growth in nodes (405b vs 8b, ms/node)', value: fmt(lin, 2), baseline: '1.00 = linear', ratio: `${fmt(lin, 2)}×`, target: '≈ 1 (≤ 2)', met: lin <= 2 });
  rows.push({ section: 'scale', case: 'growth in ranks (405b: 1024 vs 8)', value: fmt(flat, 2), baseline: '1.00 = flat', ratio: `${fmt(flat, 2)}×`, target: '≈ 1 (≤ 2)', met: flat <= 2 });
  rows.push(meshRow());
  rows.push(...benchPassChains());
  return { rows, records };
}

/**
 * llama3-405b on 1024 ranks as FSDP 128 × TP 8 (the mesh torchtitan runs): build + pass + simulate,
 * as the other rows count it (build + the slowest backend + its simulation; issue 11's target),
 * with each backend's pass + simulation listed.
 */
export function meshRow(): Row {
  const mesh = { dpReplicate: 1, dpShard: 128, tp: 8 };
  const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
  let g: StepGraph | undefined;
  const buildMs = timeMs(() => { g = buildStepGraph({ model: 'llama3-405b', worldSize: 1024, mesh }); }, 3);
  const kahnMs = timeMs(() => topoOrder(g!));
  const stageMs: Record<string, number> = {};
  for (const backend of BACKEND_NAMES) {
    let schedule = runBackend(backend, g!, cost);
    const passMs = timeMs(() => { schedule = runBackend(backend, g!, cost); }, 3);
    stageMs[backend] = passMs + timeMs(() => simulate({ worldSize: 1024, schedules: schedule, cost }), 3);
  }
  const slowest = BACKEND_NAMES.reduce((a, b) => (stageMs[b] > stageMs[a] ? b : a));
  const totalMs = buildMs + stageMs[slowest];
  const each = BACKEND_NAMES.map((b) => `${b} ${fmt(stageMs[b], 0)}`).join(', ');
  return {
    section: 'scale',
    case: `llama3-405b × 1024 ranks as FSDP 128 × TP 8 (${g!.nodes.length} nodes): build + pass + sim`,
    value:
      `build ${fmt(buildMs, 0)} + ${slowest} pass + sim ${fmt(stageMs[slowest], 0)} = ${fmt(totalMs, 0)} ms ` +
      `(pass + sim: ${each})`,
    baseline: `kahn walk ${fmt(kahnMs, 2)} ms`,
    ratio: `${fmt(totalMs / kahnMs, 0)}× walk`,
    target: 'total < 1000 ms',
    met: totalMs < 1000,
  };
}
