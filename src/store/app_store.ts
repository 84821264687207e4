// The app store: one vanilla zustand store spreading the slices (config, results, view, live).
// The vanilla store comes first (tests and non-React code use it); useApp is the thin React hook.

import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import type { SimConfig } from '../config';
import { createConfigSlice, type ConfigSlice } from './config_slice';
import { createLiveSlice, type LiveSlice } from './live_slice';
import { createResultsSlice, type ResultsSlice } from './results_slice';
import { createSweepSlice, type SweepSlice } from './sweep_slice';
import { createViewSlice, type ViewSlice } from './view_slice';

export type AppState = ConfigSlice & ResultsSlice & ViewSlice & LiveSlice & SweepSlice;

/** Whether two configs differ only in `live.*` (which the simulation never reads). */
function sameButLive(a: SimConfig, b: SimConfig): boolean {
  return JSON.stringify({ ...a, live: null }) === JSON.stringify({ ...b, live: null });
}

/**
 * Re-simulate on a config change, except one that touches only the live-run fields: editing
 * live.steps or live.timing must not wipe a live timeline (nor re-run an identical simulation).
 */
function resimulateUnlessLiveOnly(get: () => AppState): (cfg: SimConfig) => void {
  let simulated: SimConfig | null = null;
  return (cfg) => {
    const keep = simulated !== null && sameButLive(simulated, cfg) && get().sides.a !== null;
    simulated = cfg;
    if (!keep) void get().resimulate(cfg);
  };
}

export function createAppStore(): StoreApi<AppState> {
  return createStore<AppState>()((set, get) => ({
    ...createViewSlice<AppState>(set, get),
    ...createResultsSlice<AppState>(set, get),
    ...createConfigSlice<AppState>(set, get, resimulateUnlessLiveOnly(get)),
    ...createLiveSlice<AppState>(set, get),
    ...createSweepSlice<AppState>(set, get),
  }));
}

/** The page's store. */
export const appStore = createAppStore();

/** React hook: select the smallest piece you need (`useApp(s => s.selection)`). */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(appStore, selector);
}
