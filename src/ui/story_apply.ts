// Loading a story preset into the store: caption and config at once (one history entry), then,
// once the simulation lands, its zoom and selection.

import type { StoreApi } from 'zustand/vanilla';
import type { AppState } from '../store';
import { storyConfig, type Story } from './stories';

let latestToken = 0;

/**
 * Resolves when the story's view is applied (or the simulation failed). The menu and a link
 * both come here, so they reach one state: the story's config simulated afresh (a live or
 * imported side is replaced), its zoom, its selection or none (nothing left from before).
 */
export async function applyStory(store: StoreApi<AppState>, story: Story): Promise<void> {
  const token = ++latestToken;
  const st = store.getState();
  const cfg = storyConfig(story);
  st.select(null);
  st.setStory(story.id);
  const simulated = st.sides.a?.source === 'sim' && st.sides.b?.source === 'sim';
  st.setConfig(cfg); // re-simulates unless the config is the one on screen (up to live.* fields)
  if (!simulated) void st.resimulate(cfg); // a live or imported side: replace it all the same
  await store.getState().whenSimulated();
  const s = store.getState();
  if (token !== latestToken || s.simError !== null) return; // a later story owns the view
  const [f0, f1] = story.zoom;
  s.setWindow({ startUs: f0 * s.limitUs, endUs: f1 * s.limitUs });
  const sel = story.select;
  const events = sel ? s.sides[sel.side]?.events ?? [] : [];
  const i = sel ? events.findIndex(sel.pick) : -1;
  s.select(sel && i >= 0 ? { side: sel.side, eventIndex: i } : null);
}
