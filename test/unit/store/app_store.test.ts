// The app store in Node (inline simulation, no Worker): config edits validate at the field,
// re-simulate both sides, the shared window is clamped, selection resets on new data.

import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/config';
import { createAppStore } from '../../../src/store/app_store';

let store: ReturnType<typeof createAppStore>;

beforeEach(() => {
  store = createAppStore();
  store.setState(store.getInitialState(), true);
});

describe('resimulate', () => {
  it('fills both sides from the default config with A = aot_eager and B = autobucketing', async () => {
    await store.getState().resimulate(store.getState().config);
    const { sides, simError, limitUs, window } = store.getState();
    expect(simError).toBeNull();
    expect(sides.a?.backend).toBe('aot_eager');
    expect(sides.b?.backend).toBe('aot_eager_autobucketing');
    expect(new Set(sides.a!.events.map((e) => e.rank)).size).toBe(DEFAULT_CONFIG.ranks);
    const lastEnd = Math.max(...[...sides.a!.events, ...sides.b!.events].map((e) => e.start + e.dur));
    expect(limitUs).toBeCloseTo(lastEnd, 6);
    expect(window).toEqual({ startUs: 0, endUs: limitUs });
  });
});

describe('setField', () => {
  it('keeps the last good config and records a message naming the field when a value is refused', async () => {
    await store.getState().resimulate(store.getState().config);
    expect(store.getState().setField('ranks', 0)).toBe(false);
    expect(store.getState().config.ranks).toBe(DEFAULT_CONFIG.ranks);
    expect(store.getState().fieldErrors.ranks).toMatch(/ranks/);
    expect(store.getState().setField('autobucketing.max_in_flight_gb', -1)).toBe(false);
    expect(store.getState().fieldErrors['autobucketing.max_in_flight_gb']).toMatch(/max_in_flight_gb/);
  });

  it('applies a valid value, clears the field error and re-simulates', async () => {
    store.getState().setField('ranks', 0);
    expect(store.getState().setField('ranks', 2)).toBe(true);
    expect(store.getState().fieldErrors.ranks).toBeUndefined();
    await expect.poll(() => new Set(store.getState().sides.a?.events.map((e) => e.rank) ?? []).size).toBe(2);
  });
});

describe('view window', () => {
  it('zoomBy and panBy stay inside [0, limit] and fitAll restores the whole step', () => {
    store.getState().setLimit(1000, false);
    store.getState().zoomBy(0.5, 900);
    const w = store.getState().window;
    expect(w.endUs - w.startUs).toBeCloseTo(500, 9);
    expect(w.endUs).toBeLessThanOrEqual(1000);
    store.getState().panBy(10);
    expect(store.getState().window.endUs).toBe(1000);
    store.getState().panBy(-10);
    expect(store.getState().window.startUs).toBe(0);
    store.getState().fitAll();
    expect(store.getState().window).toEqual({ startUs: 0, endUs: 1000 });
  });
});

describe('live-only config changes', () => {
  it('editing live.* keeps the sides (a live timeline survives); any other field re-simulates', async () => {
    const st = store.getState();
    st.setConfig(structuredClone(DEFAULT_CONFIG));
    await new Promise<void>((ok) => {
      const u = store.subscribe((s) => {
        if (!s.simulating && s.sides.a) {
          u();
          ok();
        }
      });
    });
    const sides = store.getState().sides;
    expect(store.getState().setField('live.steps', 3)).toBe(true);
    expect(store.getState().setField('live.timing', 'measured')).toBe(true);
    expect(store.getState().simulating).toBe(false);
    expect(store.getState().sides).toBe(sides);
    expect(store.getState().setField('ranks', 2)).toBe(true);
    expect(store.getState().simulating).toBe(true);
  });
});
