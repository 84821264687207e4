// Loading a story preset into the store: caption and config at once (one history entry), then,
// once the simulation lands, its zoom and selection. In the presentation view the window closes in
// on the story's subject (its selected bucket or collective) so a room can see it.

import type { AppStore } from '../store';
import type { TimeWindow, TraceEvent } from '../trace';
import { STORIES, storyById, storyConfig, type Story } from './stories';

/** The subject takes this share of the window's width in the presentation view. */
const SUBJECT_SHARE = 0.3;

/**
 * The window that shows event i's bucket (its members on the same rank and stream), or the event
 * alone, at SUBJECT_SHARE of the width, centred (unless that would start before the step).
 */
export function subjectWindow(events: readonly TraceEvent[], i: number): TimeWindow | null {
  const e = events[i];
  if (!e) return null;
  let s = e.start;
  let t = e.start + e.dur;
  if (e.bucketId !== undefined) {
    for (const m of events) {
      if (m.bucketId !== e.bucketId || m.rank !== e.rank || m.stream !== e.stream) continue;
      s = Math.min(s, m.start);
      t = Math.max(t, m.start + m.dur);
    }
  }
  const span = Math.max(t - s, 1e-3);
  const width = span / SUBJECT_SHARE;
  const startUs = Math.max(0, s - (width - span) / 2); // near the step's start: shifted right, as wide
  return { startUs, endUs: startUs + width };
}

/** In the presentation view, zoom to the selected event's subject (nothing selected: no change). */
export function focusSubject(store: AppStore): void {
  const s = store.getState();
  const sel = s.selection;
  const w = sel ? subjectWindow(s.sides[sel.side]?.events ?? [], sel.eventIndex) : null;
  if (w) s.setWindow(w);
}

/** The story after the current one (the first after the last, or when none is shown). */
export function nextStory(id: string | null): Story {
  const at = STORIES.indexOf(storyById(id) as Story);
  return STORIES[(at + 1) % STORIES.length];
}

let latestToken = 0;

/**
 * Resolves when the story's view is applied (or the simulation failed). The menu and a link
 * both come here, so they reach one state: the story's config simulated afresh (a live or
 * imported side is replaced), its zoom, its selection or none (nothing left from before).
 */
export async function applyStory(store: AppStore, story: Story): Promise<void> {
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
  const events = sel ? (s.sides[sel.side]?.events ?? []) : [];
  const i = sel ? events.findIndex(sel.pick) : -1;
  s.select(sel && i >= 0 ? { side: sel.side, eventIndex: i } : null);
  if (s.present) focusSubject(store);
}
