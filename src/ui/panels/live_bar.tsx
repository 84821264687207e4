// Live run controls: Run live (B) / Run live A+B (both backends one after the other on the same
// workers, so the delta compares measured with measured) / Stop, a progress bar, the stage
// (per rank while they start: started, kernels compiled k/n, ready; then step k/N and ms per
// step) and the kernels: what 'auto' picks and why, from the runtime's adapter probe before a
// run and from what the ranks resolved during one.

import { useEffect, useState } from 'react';
import {
  type AdapterProbe,
  appStore,
  type LiveState,
  RANK_STAGES,
  type RankStage,
  type RankStartup,
  type ResolvedKernels,
  startupCounts,
} from '../../store';
import { useApp } from '../use_app';
import { fmtUs } from '../ui_format';

const LIVE_HINT =
  'Live mode: train the tiny model for real on rank workers (timeline B); a larger config ' + 'switches to tiny first';

/**
 * What the live kernels are (or will be) and why, in one line: the resolved kernels once a run's
 * ranks report them, else what 'auto' / 'webgpu' / 'cpu' will pick given the page's adapter probe
 * (store `probeLiveAdapter`, the runtime's own request: core, then compatibility). '' while unknown.
 */
function kernelsText(choice: string, kernels: ResolvedKernels | null, adapter: AdapterProbe | null): string {
  if (kernels) {
    const on = kernels.device.replace(/^webgpu: /, '');
    const what = kernels.kind === 'webgpu' ? `WebGPU kernels on ${on}` : 'CPU kernels';
    if (kernels.choice === 'cpu') return `${what} (kernels: cpu)`;
    if (kernels.kind === 'cpu') return `${what}: auto found no WebGPU (${kernels.noWebGpu ?? 'no adapter'})`;
    if (kernels.choice === 'auto') return `${what}: auto found this WebGPU adapter in the workers`;
    return `${what} (kernels: webgpu)`;
  }
  if (choice === 'cpu') return 'CPU kernels (kernels: cpu)';
  if (adapter === null) return '';
  if (!adapter.found) {
    return choice === 'auto' ? `CPU kernels: auto found no WebGPU (${adapter.why})` : `no WebGPU: ${adapter.why}`;
  }
  const on = `WebGPU kernels on ${adapter.label.replace(/^webgpu: /, '')}`;
  return choice === 'auto' ? `${on}: auto found this adapter` : on;
}

/** Start-up while no step is done: 'starting 8 workers: 5/8 started · kernels 37/136 compiled · 2/8 ready'. */
function startupText(live: LiveState): string {
  const head = `starting ${live.ranks} workers`;
  if (live.startup.length === 0) return head;
  const c = startupCounts(live.startup);
  const n = live.startup.length;
  const parts = [`${c.started}/${n} started`];
  if (c.kernels > 0) parts.push(`kernels ${c.compiled}/${c.kernels} compiled`);
  if (c.ready > 0) parts.push(`${c.ready}/${n} ready`);
  if (c.ready === n) parts.push('step 1 running');
  return `${head}: ${parts.join(' · ')}`;
}

const STAGE_WORDS: Readonly<Record<RankStage, string>> = {
  spawned: 'worker spawned, loading',
  started: 'worker started, getting its kernels',
  compiling: 'compiling kernels',
  ready: 'kernels ready, waiting for the others',
  stepped: 'first step done',
};

/** One box per rank, its stage as a data attribute (styled and tested) and in words (title). */
function RankStages({ startup }: { startup: readonly RankStartup[] }) {
  return (
    <ol className="live-ranks" data-testid="live-ranks" aria-label="start-up per rank">
      {startup.map((r, i) => {
        const counts = r.stage === 'compiling' && r.kernels > 0 ? ` ${r.compiled}/${r.kernels}` : '';
        const words = `rank ${i}: ${STAGE_WORDS[r.stage]}${counts}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: ranks are positions, they never reorder
          <li key={i} data-stage={r.stage} title={words} aria-label={words}>
            {RANK_STAGES.indexOf(r.stage)}
          </li>
        );
      })}
    </ol>
  );
}

/** Seconds since `running` turned true (ticks once a second while running). */
function useElapsed(running: boolean): number {
  const [t0, setT0] = useState(0);
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (!running) return;
    const start = performance.now();
    setT0(start);
    setNow(start);
    const id = setInterval(() => setNow(performance.now()), 1000);
    return () => clearInterval(id);
  }, [running]);
  return running ? (now - t0) / 1000 : 0;
}

async function runBoth(): Promise<void> {
  const st = appStore.getState();
  await st.startLive({ side: 'a' });
  const after = appStore.getState().live;
  if (after.error || after.step < after.steps) return; // stopped or failed: do not start B
  await appStore.getState().startLive({ side: 'b' });
}

/** The status line: the stage, the step reached, or where a stopped run stopped. */
function statusText(live: LiveState, elapsed: number): string {
  const who = live.side.toUpperCase();
  const on = `${live.ranks} workers${live.mesh ? ` (${live.mesh})` : ''}`;
  if (live.stoppedAfter !== null) {
    const k = live.stoppedAfter;
    const at = k > 0 ? `stopped after step ${k} of ${live.steps}` : 'stopped before its first step';
    return `${who}: tiny on ${on} · ${at} (not compared)`;
  }
  if (live.running && live.step === 0) {
    const waited = fmtUs(elapsed * 1e6, { unit: 's', digits: 0 });
    return `${who}: ${startupText(live)}… ${waited}`;
  }
  if (live.running || live.step > 0) {
    const ms = live.stepsPerSec > 0 ? ` · ${fmtUs(1e6 / live.stepsPerSec, { unit: 'ms', digits: 0 })}/step` : '';
    return `${who}: tiny on ${on} · step ${live.step}/${live.steps}${ms}`;
  }
  return 'simulated · live mode: Run live trains the tiny model on worker ranks';
}

export function LiveBar() {
  const live = useApp((s) => s.live);
  const choice = useApp((s) => s.config.live.kernels);
  const adapter = useApp((s) => s.liveAdapter);
  useEffect(() => {
    void appStore.getState().probeLiveAdapter();
  }, []);
  const elapsed = useElapsed(live.running);
  const canRun = typeof SharedArrayBuffer !== 'undefined';
  const why = canRun ? '' : 'needs cross-origin isolation (SharedArrayBuffer)';
  // a finished or running run says what its ranks resolved; before one, what the choice will pick here
  const ran = live.kernels && (live.running || live.step > 0) && live.kernels.choice === choice;
  const kernels = ran ? live.kernels : null;
  const device = kernelsText(choice, kernels, adapter);
  const stages = live.running && live.step === 0 && live.startup.length > 0;
  const status = statusText(live, elapsed);
  return (
    <div className="live-bar" data-testid="live-bar">
      {live.running ? (
        <button type="button" className="stop" onClick={() => appStore.getState().stopLive()} data-testid="live-stop">
          Stop
        </button>
      ) : (
        <>
          <button
            type="button"
            className="primary"
            onClick={() => void appStore.getState().startLive()}
            disabled={!canRun}
            title={why || LIVE_HINT}
            data-testid="live-run"
          >
            Run live
          </button>
          <button
            type="button"
            onClick={() => void runBoth()}
            disabled={!canRun}
            data-testid="live-run-both"
            title={why || 'Run A, then B, live on the same workers: both timelines on one clock'}
          >
            Run live A+B
          </button>
        </>
      )}
      <progress
        max={Math.max(1, live.steps)}
        value={live.step}
        data-testid="live-progress"
        aria-label="live run progress"
      />
      <span
        className={`muted live-status${live.running || live.step > 0 || live.stoppedAfter !== null ? '' : ' idle'}`}
        data-testid="live-status"
        role="status"
        title={`${status}${device ? ` · ${device}` : ''}`}
      >
        {status}
      </span>
      {stages && <RankStages startup={live.startup} />}
      {device && (
        <span className="muted small adapter" data-testid="live-adapter" title={device}>
          {device}
        </span>
      )}
    </div>
  );
}
