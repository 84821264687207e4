// The app store: one vanilla zustand store spreading the slices (config, results, view, live).
// No React here (only ui/ touches React): the hook that reads it, useApp, is ui/use_app.ts.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { SimConfig } from '../config';
import { createConfigSlice, type ConfigSlice } from './config_slice';
import { createLiveSlice, type LiveSlice } from './live_slice';
import { createResultsSlice, type ResultsSlice } from './results_slice';
import { createSweepSlice, type SweepSlice } from './sweep_slice';
import { createViewSlice, type ViewSlice } from './view_slice';

export type AppState = ConfigSlice & ResultsSlice & ViewSlice & LiveSlice & SweepSlice;
/** The store's handle (getState, setState, subscribe): what the UI's non-React code takes. */
export type AppStore = StoreApi<AppState>;

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
