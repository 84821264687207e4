// TimeScale and window arithmetic: the mapping both timelines share.

import { describe, expect, it } from 'vitest';
import { MIN_WINDOW_US, TimeScale, clampWindow, panWindow, zoomWindow } from '../../../src/trace/time_scale';

describe('TimeScale', () => {
  it('scale.pxToTime(x) maps a pixel back to time', () => {
    const s = new TimeScale({ startUs: 100, endUs: 300 }, 50, 400);
    for (const t of [100, 150, 299.5]) expect(s.pxToTime(s.timeToPx(t))).toBeCloseTo(t, 9);
    expect(s.timeToPx(100)).toBe(50);
    expect(s.timeToPx(300)).toBe(450);
    expect(s.durToPx(50)).toBe(100);
  });

  it('withWindow returns the same object when the window is unchanged', () => {
    const s = new TimeScale({ startUs: 0, endUs: 10 }, 0, 100);
    expect(s.withWindow({ startUs: 0, endUs: 10 })).toBe(s);
    expect(s.withWindow({ startUs: 0, endUs: 20 }).pxPerUs).toBe(5);
  });
});

describe('zoomWindow', () => {
  it('keeps the anchor time at the same fraction of the window', () => {
    const w = zoomWindow({ startUs: 0, endUs: 1000 }, 0.5, 250, 1000);
    expect(w.endUs - w.startUs).toBe(500);
    expect((250 - w.startUs) / (w.endUs - w.startUs)).toBeCloseTo(0.25, 9);
  });

  it('never zooms out past the limit nor in below MIN_WINDOW_US', () => {
    expect(zoomWindow({ startUs: 0, endUs: 1000 }, 10, 500, 1000)).toEqual({ startUs: 0, endUs: 1000 });
    const w = zoomWindow({ startUs: 0, endUs: 2 }, 1e-6, 1, 1000);
    expect(w.endUs - w.startUs).toBeCloseTo(MIN_WINDOW_US, 9);
  });
});

describe('panWindow / clampWindow', () => {
  it('pans by the given time and stops at both ends', () => {
    expect(panWindow({ startUs: 100, endUs: 200 }, 50, 1000)).toEqual({ startUs: 150, endUs: 250 });
    expect(panWindow({ startUs: 100, endUs: 200 }, -500, 1000)).toEqual({ startUs: 0, endUs: 100 });
    expect(panWindow({ startUs: 100, endUs: 200 }, 5000, 1000)).toEqual({ startUs: 900, endUs: 1000 });
    expect(clampWindow({ startUs: -5, endUs: 5000 }, 1000)).toEqual({ startUs: 0, endUs: 1000 });
  });
});
