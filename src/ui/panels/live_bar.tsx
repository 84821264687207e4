// Live run controls: Run live (B) / Run live A+B (both backends one after the other on the same
// workers, so the delta compares measured with measured) / Stop, a progress bar, the stage
// (starting workers and compiling kernels, then step k/N and ms per step) and the adapter,
// known from the start (WebGPU's adapter info) rather than only after the run.

import { useEffect, useState } from 'react';
import { appStore, type LiveState, useApp } from '../../store';
import { fmtUs } from '../ui_format';

const LIVE_HINT = 'Live mode: train the tiny model for real on rank workers (timeline B); a larger config '
  + 'switches to tiny first';

/** The WebGPU adapter's name, or '' while unknown / 'CPU kernels' when there is none. */

function useAdapterName(kernels: string): string {
  const [name, setName] = useState('');
  useEffect(() => {
    let live = true;
    const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
    if (kernels === 'cpu' || !gpu) {
      setName('CPU kernels');
      return;
    }
    void gpu.requestAdapter().then((a) => {
      if (!live) return;
      const info = (a as (GPUAdapter & { info?: GPUAdapterInfo }) | null)?.info;
      const words = info ? [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') : '';
      setName(a ? `WebGPU ${words || 'adapter'}` : 'CPU kernels (no WebGPU adapter)');
    }, () => live && setName('CPU kernels (no WebGPU adapter)'));
    return () => { live = false; };
  }, [kernels]);
  return name;
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
    return `${who}: starting ${live.ranks} workers, compiling kernels… ${waited}`;
  }
  if (live.running || live.step > 0) {
    const ms = live.stepsPerSec > 0 ? ` · ${fmtUs(1e6 / live.stepsPerSec, { unit: 'ms', digits: 0 })}/step` : '';
    return `${who}: tiny on ${on} · step ${live.step}/${live.steps}${ms}`;
  }
  return 'simulated · live mode: Run live trains the tiny model on worker ranks';
}

export function LiveBar() {
  const live = useApp((s) => s.live);
  const kernels = useApp((s) => s.config.live.kernels);
  const adapter = useAdapterName(kernels);
  const elapsed = useElapsed(live.running);
  const canRun = typeof SharedArrayBuffer !== 'undefined';
  const why = canRun ? '' : 'needs cross-origin isolation (SharedArrayBuffer)';
  const device = live.device || adapter;
  const status = statusText(live, elapsed);
  return (
    <div className="live-bar" data-testid="live-bar">
      {live.running ? (
        <button type="button" className="stop" onClick={() => appStore.getState().stopLive()}
          data-testid="live-stop">Stop</button>
      ) : (
        <>
          <button type="button" className="primary" onClick={() => void appStore.getState().startLive()}
            disabled={!canRun} title={why || LIVE_HINT}
            data-testid="live-run">
            Run live
          </button>
          <button type="button" onClick={() => void runBoth()} disabled={!canRun} data-testid="live-run-both"
            title={why || 'Run A, then B, live on the same workers: both timelines on one clock'}>
            Run live A+B
          </button>
        </>
      )}
      <progress max={Math.max(1, live.steps)} value={live.step} data-testid="live-progress"
        aria-label="live run progress" />
      <span className={`muted live-status${live.running || live.step > 0 || live.stoppedAfter !== null ? '' : ' idle'}`}
        data-testid="live-status" role="status" title={`${status}${device ? ` · ${device}` : ''}`}>{status}</span>
      {device && <span className="muted small adapter" data-testid="live-adapter" title={device}>{device}</span>}
    </div>
  );
}
