// A story reaches one state however it is reached: applied over the very config on screen (no
// re-simulation happens) it still zooms and selects, and a story without a selection clears the
// previous one (nothing left over).

import { describe, expect, it } from 'vitest';
import { parseConfigQuery } from '../../../src/config';
import { createAppStore } from '../../../src/store/app_store';
import type { Story } from '../../../src/ui/stories';
import { applyStory } from '../../../src/ui/story_apply';

const story = (id: string, query: string, select: boolean): Story => ({
  id,
  title: id,
  query,
  zoom: [0, 0.5],
  setup: () => '',
  claims: [],
  ...(select ? { select: { side: 'b' as const, pick: (e) => e.rank === 0 && e.kind === 'all_gather' } } : {}),
});

describe('applyStory', () => {
  it("zooms and selects even when the story's config is already the one on screen", async () => {
    const store = createAppStore();
    const picks = story('picks', 'model=tiny&ranks=4', true);
    store.getState().setConfig(parseConfigQuery(picks.query).config);
    await store.getState().whenSimulated();
    const sides = store.getState().sides;
    await applyStory(store, picks);
    const s = store.getState();
    expect(s.sides).toBe(sides); // nothing re-simulated
    expect(s.window).toEqual({ startUs: 0, endUs: 0.5 * s.limitUs });
    const sel = s.selection!;
    expect(s.sides.b!.events[sel.eventIndex]).toMatchObject({ rank: 0, kind: 'all_gather' });
    expect(s.story).toBe('picks');
  });

  it('a story without a selection leaves none from the one before', async () => {
    const store = createAppStore();
    await applyStory(store, story('picks', 'model=tiny&ranks=4', true));
    expect(store.getState().selection).not.toBeNull();
    await applyStory(store, story('plain', 'model=tiny&ranks=4&jitterPct=1', false));
    expect(store.getState().selection).toBeNull();
    expect(store.getState().story).toBe('plain');
  });
});
