// Loading a story preset into the store: caption and config at once (one history entry), then,
// once the simulation lands, its zoom and selection.

import type { StoreApi } from 'zustand/vanilla';
import type { AppState } from '../store';
import { storyConfig, type Story } from './stories';

/** Resolves when the story's view is applied (or the simulation failed). */
export function applyStory(store: StoreApi<AppState>, story: Story): Promise<void> {
  const landed = new Promise<boolean>((resolve) => {
    const unsub = store.subscribe((s, prev) => {
      if (prev.simulating && !s.simulating) {
        unsub();
        resolve(s.simError === null);
      }
    });
  });
  const st = store.getState();
  st.setStory(story.id);
  st.setConfig(storyConfig(story));
  return landed.then((ok) => {
    if (!ok) return;
    const s = store.getState();
    const [f0, f1] = story.zoom;
    s.setWindow({ startUs: f0 * s.limitUs, endUs: f1 * s.limitUs });
    const sel = story.select;
    const events = sel ? s.sides[sel.side]?.events ?? [] : [];
    const i = sel ? events.findIndex(sel.pick) : -1;
    if (sel && i >= 0) s.select({ side: sel.side, eventIndex: i });
  });
}
