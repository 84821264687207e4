// Bench page: time from runTraining to the first loss of live tiny training on browser rank Web
// Workers, WebGPU kernels (the adapter the page's Chromium flags give) against CPU reference
// kernels, same page, same run; also the main thread's longest task while the workers start.
import { runTraining } from '../../src/runtime/coordinator';
import type { KernelChoice, RankStartup } from '../../src/runtime';
import { phaseReport, type StepPhases } from '../../src/runtime/exec';
import { ready } from './bench_page';

export interface StartupPageCase {
  readonly kernels: KernelChoice;
  readonly ranks: number;
}

export interface StartupPageRecord extends StartupPageCase {
  readonly device: string;
  readonly firstLossS: number; // runTraining called → first progress callback (step 1's mean loss)
  readonly loss: number;
  readonly longestTaskMs: number; // the page's longest task until then (PerformanceObserver 'longtask')
  readonly stages: readonly RankStartup[]; // each rank's stage times (ms from the spawn) at the first loss
  readonly step1: StepPhases; // where step 1 went, mean over ranks (ms)
}

async function runCase(c: StartupPageCase): Promise<StartupPageRecord> {
  let longest = 0;
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) longest = Math.max(longest, e.duration);
  });
  obs.observe({ type: 'longtask' });
  const ctl = new AbortController();
  const t0 = performance.now();
  let first: { s: number; loss: number; device: string; step1: StepPhases } | undefined;
  let ranks: readonly RankStartup[] = [];
  try {
    await runTraining({
      model: 'tiny',
      ranks: c.ranks as never,
      steps: 1,
      backend: 'aot_eager',
      seed: 0,
      kernels: c.kernels,
      collective: 'direct',
      timing: 'preset',
      hardware: 'h100',
      signal: ctl.signal,
      onStartup: (p) => {
        ranks = p.ranks;
      },
      onProgress: (p) => {
        const s = (performance.now() - t0) / 1000;
        first ??= { s, loss: p.loss, device: p.device ?? '', step1: phaseReport([p.phases ?? []]).mean };
      },
    });
  } finally {
    obs.disconnect();
  }
  if (!first) throw new Error('no progress');
  console.info(`startup ${c.kernels} × ${c.ranks}: first loss ${first.s.toFixed(2)} s on ${first.device}`);
  const { device, loss, step1 } = first;
  return { ...c, device, firstLossS: first.s, loss, longestTaskMs: longest, stages: ranks, step1 };
}

async function run(cases: readonly StartupPageCase[]): Promise<StartupPageRecord[]> {
  if (!crossOriginIsolated) throw new Error('startup bench page is not cross-origin isolated: no SharedArrayBuffer');
  const out: StartupPageRecord[] = [];
  for (const c of cases) out.push(await runCase(c));
  return out;
}

ready({ startup: run as (o: never) => Promise<unknown> });
