// Live slice: a real training run on rank Web Workers (src/runtime coordinator). Streams
// progress (step, loss, steps/s, the step's events) into the store; Stop aborts the run. The run
// takes the config's mesh (TP, HSDP) as far as the live workers and the tiny model can.

import type { StoreApi } from 'zustand/vanilla';
import { runTraining } from '../runtime/coordinator'; // the browser flavour (Web Workers)
import type { BackendName } from '../backends/types';
import { describeMesh, type SimConfig } from '../config';
import { sideFromEvents } from './engine';
import { liveMeshOf, liveRunOptions } from './live_run';
import type { ConfigSlice } from './config_slice';
import type { ResultsSlice } from './results_slice';
import type { LiveState, Side } from './types';
import type { ViewSlice } from './view_slice';

export interface LiveSlice {
  readonly live: LiveState;
  startLive(opts?: { steps?: number; side?: Side }): Promise<void>;
  stopLive(): void;
}

export const IDLE_LIVE: LiveState = {
  running: false, step: 0, steps: 0, stepsPerSec: 0, losses: [], device: '', error: null, side: 'b', ranks: 0, mesh: '',
};

export function createLiveSlice<S extends LiveSlice & ResultsSlice & ViewSlice & ConfigSlice>(
  set: StoreApi<S>['setState'], get: () => S,
): LiveSlice {
  let controller: AbortController | null = null;
  const setLive = (p: Partial<LiveState>) => set({ live: { ...get().live, ...p } } as Partial<S>);
  return {
    live: IDLE_LIVE,
    startLive: async (opts = {}) => {
      if (get().live.running) return;
      const cfg: SimConfig = get().config;
      const side = opts.side ?? 'b';
      const backend = (side === 'a' ? cfg.backendA : cfg.backendB) as BackendName;
      const steps = opts.steps ?? cfg.live.steps;
      const run = liveRunOptions(cfg, backend, steps);
      const ranks = run.ranks;
      const mesh = liveMeshOf(cfg.parallelism, ranks);
      controller = new AbortController();
      set({ live: { ...IDLE_LIVE, running: true, steps, side, ranks, mesh: describeMesh(mesh) } } as Partial<S>);
      let firstEvents = true;
      try {
        const res = await runTraining({
          ...run,
          signal: controller.signal,
          onProgress: (p) => {
            setLive({ step: p.step, stepsPerSec: p.stepsPerSec, losses: [...get().live.losses, { step: p.step, loss: p.loss }] });
            // measured timing draws the step as this machine ran it: its readbacks, uploads and barrier waits too
            const events = cfg.live.timing === 'measured' && p.wallEvents?.length ? p.wallEvents : p.events;
            if (events?.length) {
              const clock = `live: ${cfg.live.timing} timing`;
              get().setSide(side, sideFromEvents(events, [], `${backend} (live)`, backend, 'live', clock, ranks), !firstEvents);
              firstEvents = false;
            }
          },
        });
        setLive({ running: false, device: res.device, stepsPerSec: res.stepsPerSec });
      } catch (e) {
        const aborted = controller?.signal.aborted;
        setLive({ running: false, error: aborted ? null : `Live run failed: ${(e as Error).message}` });
      } finally {
        controller = null;
      }
    },
    stopLive: () => {
      controller?.abort();
      setLive({ running: false });
    },
  };
}
