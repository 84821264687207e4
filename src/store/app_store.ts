// The app store: one vanilla zustand store spreading the slices (config, results, view, live).
// The vanilla store comes first (tests and non-React code use it); useApp is the thin React hook.

import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { createConfigSlice, type ConfigSlice } from './config_slice';
import { createLiveSlice, type LiveSlice } from './live_slice';
import { createResultsSlice, type ResultsSlice } from './results_slice';
import { createViewSlice, type ViewSlice } from './view_slice';

export type AppState = ConfigSlice & ResultsSlice & ViewSlice & LiveSlice;

export function createAppStore(): StoreApi<AppState> {
  return createStore<AppState>()((set, get) => ({
    ...createViewSlice<AppState>(set, get),
    ...createResultsSlice<AppState>(set, get),
    ...createConfigSlice<AppState>(set, get, (cfg) => void get().resimulate(cfg)),
    ...createLiveSlice<AppState>(set, get),
  }));
}

/** The page's store. */
export const appStore = createAppStore();

/** React hook: select the smallest piece you need (`useApp(s => s.selection)`). */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(appStore, selector);
}
