// The store's React hook: the one file that imports zustand's React binding (only ui/ touches
// React; the store itself is a vanilla zustand store, docs/ARCHITECTURE.md §2).
import { useStore } from 'zustand';
import { appStore, type AppState } from '../store';

/** Select the smallest piece you need (`useApp(s => s.selection)`). */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(appStore, selector);
}
