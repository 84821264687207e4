// Bench 5: live training throughput of the `tiny` preset through the Node coordinator
// (src/runtime/coordinator_node: one worker_threads rank per worker, SAB collectives), steps/s on
// 1, 2, 4, 8 workers with CPU reference kernels, and with Dawn WebGPU (SwiftShader, core) kernels,
// for both backends. Baseline: 1 worker, CPU kernels, same backend, same run.
// Steady-state rate: 1 / median time between progress callbacks of the steps after the first (which
// pays worker start-up and pipeline compiles); the median shrugs off a neighbour's CPU spike. The global batch is fixed (8 rows), so more workers split the same work:
// on 2 cores the ideal is ≤ 2× the 1-worker rate, and collectives + barriers cost extra.
// Each row also says where a step went (src/runtime/exec/phases.ts: mean over ranks of the steps
// after the first): compute, collective copies/sums, barrier waits, readback, upload, compile.
// Then the browser: rank Web Workers with WebGPU kernels on lavapipe (Chromium's compatibility
// adapter), 1 and 4 workers, both backends (bench/pages/training.ts).

import { BACKEND_NAMES, type BackendName } from '../src/backends/schedule_types';
import { runTrainingNode } from '../src/runtime/coordinator_node';
import type { RankCount } from '../src/runtime';
import { phaseReport, type StepPhases } from '../src/runtime/exec';
import { openPage } from './browser';
import type { TrainingPageCase, TrainingPageRecord } from './pages/training';
import { fmt, type Row } from './stats';
import { midpointMedian } from '../src/util';

export interface TrainingRecord {
  readonly backend: BackendName;
  readonly kernels: 'cpu' | 'webgpu';
  readonly ranks: RankCount;
  readonly steps: number;
  readonly device: string;
  readonly stepsPerSec: number; // steady state: 1 / median step interval after step 1
  readonly coordinatorStepsPerSec: number; // TrainingResult.stepsPerSec (includes step 1)
  readonly wallS: number; // whole run including worker start-up
  readonly finalLoss: number;
  readonly paramsHash: string;
  readonly phases: StepPhases; // mean ms per rank-step after the first
}

async function one(
  backend: BackendName,
  kernels: 'cpu' | 'webgpu',
  ranks: RankCount,
  steps: number,
): Promise<TrainingRecord> {
  const stamps: number[] = [];
  const t0 = performance.now();
  const res = await runTrainingNode({
    model: 'tiny',
    ranks,
    steps,
    backend,
    seed: 0,
    kernels,
    collective: 'direct',
    timing: 'preset',
    hardware: 'h100',
    onProgress: () => stamps.push(performance.now()),
  });
  const gaps = stamps.slice(1).map((t, i) => t - stamps[i]); // ms per step after the first
  const steady = gaps.length ? 1000 / midpointMedian(gaps) : res.stepsPerSec;
  return {
    backend,
    kernels,
    ranks,
    steps,
    device: res.device,
    stepsPerSec: steady,
    coordinatorStepsPerSec: res.stepsPerSec,
    wallS: (performance.now() - t0) / 1000,
    finalLoss: res.losses[res.losses.length - 1],
    paramsHash: res.finalParamsHash,
    phases: phaseReport(res.phases).mean,
  };
}

/** `compute 12 · coll 3 · barrier 4 · rb 0.2 · up 0.1 · compile 0 ms` (mean per rank-step). */
function phaseLine(p: StepPhases): string {
  const short = [
    ['compute', p.compute],
    ['coll', p.collective],
    ['barrier', p.barrier],
    ['rb', p.readback],
    ['up', p.upload],
    ['compile', p.compile],
  ] as const;
  return `${short.map(([k, v]) => `${k} ${fmt(v, v < 10 ? 1 : 0)}`).join(' · ')} ms`;
}

export async function benchTraining(
  url: string,
  full: boolean,
  log: (s: string) => void,
): Promise<{ rows: Row[]; records: { node: TrainingRecord[]; browser: TrainingPageRecord[] } }> {
  const records: TrainingRecord[] = [];
  const cpuRanks: RankCount[] = [1, 2, 4, 8];
  // Dawn on SwiftShader runs the tiny step at ~0.05 steps/s here: 1 worker by default, more with --full.
  const gpuRanks: RankCount[] = full ? [1, 2, 4, 8] : [1];
  for (const backend of BACKEND_NAMES.filter((b) => b === 'aot_eager' || b === 'aot_eager_autobucketing')) {
    for (const ranks of cpuRanks) {
      const r = await one(backend, 'cpu', ranks, 5);
      log(`training ${backend} cpu ${ranks}: ${fmt(r.stepsPerSec, 2)} steps/s`);
      records.push(r);
    }
    for (const ranks of gpuRanks) {
      try {
        const r = await one(backend, 'webgpu', ranks, 2);
        log(`training ${backend} gpu ${ranks}: ${fmt(r.stepsPerSec, 3)} steps/s`);
        records.push(r);
      } catch (e) {
        log(
          `training ${backend} gpu ${ranks}: no GPU run (${e instanceof Error ? e.message.slice(0, 200) : String(e)})`,
        );
      }
    }
  }
  const rows = records.map((r): Row => {
    const base = records.find((x) => x.backend === r.backend && x.kernels === 'cpu' && x.ranks === 1)!;
    const same = records.find((x) => x.kernels === 'cpu' && x.ranks === r.ranks && x.backend === 'aot_eager');
    const bitsNote =
      same && r.kernels === 'cpu' && r.backend !== 'aot_eager'
        ? same.paramsHash === r.paramsHash
          ? ', params = aot_eager'
          : ', params ≠ aot_eager'
        : '';
    return {
      section: 'training',
      case: `tiny ${r.backend} ${r.kernels} × ${r.ranks} worker${r.ranks > 1 ? 's' : ''}`,
      value: `${fmt(r.stepsPerSec, r.stepsPerSec < 0.1 ? 3 : 2)} steps/s (${fmt(1000 / r.stepsPerSec, 0)} ms/step; loss ${fmt(r.finalLoss, 3)}${bitsNote}; ${phaseLine(r.phases)})`,
      baseline: `1 worker cpu ${fmt(base.stepsPerSec, 2)} steps/s`,
      ratio: `${fmt(r.stepsPerSec / base.stepsPerSec, 2)}×`,
      target: '',
      met: null,
    };
  });
  rows.push(...bucketingRows(records));
  const browser = await browserRecords(url, log);
  rows.push(...lavapipeRows(browser));
  return { rows, records: { node: records, browser } };
}

/** Issue 13 as filed: "in the browser on lavapipe a step takes 1.3–1.8 s" (tiny, 4 workers): the code then, not this run. */
const FILED_LAVAPIPE_STEP_S = 1.3;
const LAVAPIPE_TARGET = 1.5;

async function browserRecords(url: string, log: (s: string) => void): Promise<TrainingPageRecord[]> {
  const cases: TrainingPageCase[] = [];
  for (const backend of ['aot_eager', 'aot_eager_autobucketing'] as const) {
    for (const ranks of [1, 4]) cases.push({ backend, ranks, steps: 5 });
  }
  const { browser, page } = await openPage('compat', `${url}/bench/pages/training.html`);
  try {
    const out = (await page.evaluate(
      (c) => (window as unknown as { __bench: { training(c: unknown): Promise<unknown> } }).__bench.training(c),
      cases,
    )) as TrainingPageRecord[];
    for (const r of out) {
      log(`training browser ${r.backend} gpu ${r.ranks}: ${fmt(r.stepsPerSec, 3)} steps/s (${r.device})`);
    }
    return out;
  } finally {
    await browser.close();
  }
}

/** Browser rows: each run; autobucketing ≥ aot_eager on 4 GPU workers (same run); 4 workers vs issue 13's filed rate. */
function lavapipeRows(records: readonly TrainingPageRecord[]): Row[] {
  const rows: Row[] = records.map((r) => ({
    section: 'training',
    case: `browser tiny ${r.backend} gpu × ${r.ranks} worker${r.ranks > 1 ? 's' : ''} (${r.device})`,
    value:
      `${fmt(r.stepsPerSec, 3)} steps/s (${fmt(1000 / r.stepsPerSec, 0)} ms/step; ` +
      `first step ${fmt(r.firstStepS, 1)} s; ` +
      `${phaseLine(r.phases)})`,
    baseline: '',
    ratio: '',
    target: '',
    met: null,
  }));
  const at = (b: BackendName) => records.find((r) => r.backend === b && r.ranks === 4);
  const plain = at('aot_eager');
  const bucketed = at('aot_eager_autobucketing');
  if (plain === undefined || bucketed === undefined) return rows;
  const ratio = bucketed.stepsPerSec / plain.stepsPerSec;
  rows.push({
    section: 'training',
    case: 'browser tiny autobucketing vs aot_eager, gpu × 4 (lavapipe)',
    value: `${fmt(bucketed.stepsPerSec, 3)} steps/s`,
    baseline: `aot_eager ${fmt(plain.stepsPerSec, 3)} steps/s (same run)`,
    ratio: `${fmt(ratio, 2)}×`,
    target: '≥ 1×',
    met: ratio >= 1,
  });
  const filed = 1 / FILED_LAVAPIPE_STEP_S;
  const best = Math.max(plain.stepsPerSec, bucketed.stepsPerSec);
  rows.push({
    section: 'training',
    case: 'browser tiny gpu × 4 on lavapipe vs issue 13 as filed',
    value: `${fmt(best, 3)} steps/s`,
    baseline: `${fmt(filed, 2)} steps/s (1.3 s/step as filed: not this run)`,
    ratio: `${fmt(best / filed, 2)}×`,
    target: `≥ ${LAVAPIPE_TARGET}×`,
    met: best / filed >= LAVAPIPE_TARGET,
  });
  return rows;
}

/** autobucketing vs aot_eager, same kernels and workers, same run: fewer, larger collectives must not be slower. */
function bucketingRows(records: readonly TrainingRecord[]): Row[] {
  const out: Row[] = [];
  for (const r of records.filter((x) => x.backend === 'aot_eager_autobucketing')) {
    const base = records.find((x) => x.backend === 'aot_eager' && x.kernels === r.kernels && x.ranks === r.ranks);
    if (base === undefined) continue;
    const ratio = r.stepsPerSec / base.stepsPerSec;
    const gated = r.kernels === 'webgpu' && r.ranks === 4; // issue 13: autobucketing ≥ aot_eager with GPU kernels on 4 workers
    out.push({
      section: 'training',
      case: `tiny autobucketing vs aot_eager, ${r.kernels} × ${r.ranks}`,
      value: `${fmt(r.stepsPerSec, 3)} steps/s (readback ${fmt(r.phases.readback, 1)} ms/step)`,
      baseline: `aot_eager ${fmt(base.stepsPerSec, 3)} steps/s (readback ${fmt(base.phases.readback, 1)} ms/step)`,
      ratio: `${fmt(ratio, 2)}×`,
      target: gated ? '≥ 1×' : '',
      met: gated ? ratio >= 1 : null,
    });
  }
  return out;
}
