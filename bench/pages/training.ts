// Bench page 5: live training of the tiny model in the browser, one rank Web Worker per rank with
// its own WebGPU device (the adapter the page's Chromium flags give: lavapipe through compatibility
// mode, or SwiftShader), SharedArrayBuffer collectives. Steady-state rate: 1 / median gap between
// progress callbacks after step 1 (which pays worker start-up and pipeline compiles).
import type { BackendName } from '../../src/backends/schedule_types';
import { runTraining } from '../../src/runtime/coordinator';
import { phaseReport, type StepPhases } from '../../src/runtime/exec';
import { ready } from './bench_page';
import { midpointMedian } from '../../src/util';

export interface TrainingPageCase {
  readonly backend: BackendName;
  readonly ranks: number;
  readonly steps: number;
}

export interface TrainingPageRecord extends TrainingPageCase {
  readonly device: string;
  readonly stepsPerSec: number;
  readonly firstStepS: number; // start-up, compiles and step 1
  readonly finalLoss: number;
  readonly paramsHash: string;
  readonly phases: StepPhases; // mean ms per rank-step after the first
}

async function runCase(c: TrainingPageCase): Promise<TrainingPageRecord> {
  const t0 = performance.now();
  const stamps: number[] = [];
  const res = await runTraining({
    model: 'tiny',
    ranks: c.ranks,
    steps: c.steps,
    backend: c.backend,
    seed: 0,
    kernels: 'webgpu',
    collective: 'direct',
    timing: 'preset',
    hardware: 'h100',
    onProgress: () => stamps.push(performance.now()),
  });
  const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
  const rec: TrainingPageRecord = {
    ...c,
    device: res.device,
    stepsPerSec: 1000 / midpointMedian(gaps),
    firstStepS: (stamps[0] - t0) / 1000,
    finalLoss: res.losses[res.losses.length - 1],
    paramsHash: res.finalParamsHash,
    phases: phaseReport(res.phases).mean,
  };
  console.info(`training ${c.backend} gpu × ${c.ranks}: ${rec.stepsPerSec.toFixed(3)} steps/s on ${rec.device}`);
  return rec;
}

async function run(cases: readonly TrainingPageCase[]): Promise<TrainingPageRecord[]> {
  if (!crossOriginIsolated) throw new Error('training bench page is not cross-origin isolated: no SharedArrayBuffer');
  const out: TrainingPageRecord[] = [];
  for (const c of cases) out.push(await runCase(c));
  return out;
}

ready({ training: run as (o: never) => Promise<unknown> });
