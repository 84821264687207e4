// Live run controls: Run live / Stop, a progress bar with steps/s, the device used.

import { appStore, useApp } from '../../store';

export function LiveBar() {
  const live = useApp((s) => s.live);
  const canRun = typeof SharedArrayBuffer !== 'undefined';
  return (
    <div className="live-bar" data-testid="live-bar">
      {live.running ? (
        <button className="stop" onClick={() => appStore.getState().stopLive()} data-testid="live-stop">Stop</button>
      ) : (
        <button className="primary" onClick={() => void appStore.getState().startLive()} disabled={!canRun}
          title={canRun ? 'Train the tiny model for real on rank workers' : 'needs cross-origin isolation (SharedArrayBuffer)'} data-testid="live-run">
          Run live
        </button>
      )}
      <progress max={Math.max(1, live.steps)} value={live.step} data-testid="live-progress" />
      <span className="muted" data-testid="live-status">
        {live.running || live.step > 0
          ? `tiny on ${live.ranks} workers · step ${live.step}/${live.steps} · ${live.stepsPerSec.toFixed(2)} steps/s${live.device ? ` · ${live.device}` : ''}`
          : 'simulated · Run live trains tiny on worker ranks'}
      </span>
    </div>
  );
}
