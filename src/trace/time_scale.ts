// TimeScale: the one mapping time (µs) ↔ pixels that every track draws through (Perfetto's
// TimeScale). Immutable value object: `withWindow` returns a new scale. It lives with the trace
// model, below the store and the UI: the store keeps the view window, the timeline draws with it.

export interface TimeWindow {
  readonly startUs: number;
  readonly endUs: number;
}

export class TimeScale {
  readonly pxPerUs: number;
  constructor(
    readonly window: TimeWindow,
    readonly x0Px: number, // left edge of the drawing area
    readonly widthPx: number,
  ) {
    const span = Math.max(window.endUs - window.startUs, 1e-9);
    this.pxPerUs = widthPx / span;
  }

  /** timeToPx(t): t∈[start,end] → x∈[x0, x0+width] */
  timeToPx(tUs: number): number {
    return this.x0Px + (tUs - this.window.startUs) * this.pxPerUs;
  }

  /** pxToTime(x): inverse of timeToPx */
  pxToTime(xPx: number): number {
    return this.window.startUs + (xPx - this.x0Px) / this.pxPerUs;
  }

  durToPx(durUs: number): number {
    return durUs * this.pxPerUs;
  }

  withWindow(window: TimeWindow): TimeScale {
    if (window.startUs === this.window.startUs && window.endUs === this.window.endUs) return this;
    return new TimeScale(window, this.x0Px, this.widthPx);
  }
}

/** Smallest window the view may shrink to (µs): below this, labels of 0.1 µs would collide. */
export const MIN_WINDOW_US = 1;

/** Zoom a window by factor k (k < 1 zooms in) around anchor time `atUs`, clamped to [0, limitUs]. */
export function zoomWindow(w: TimeWindow, k: number, atUs: number, limitUs: number): TimeWindow {
  const span = w.endUs - w.startUs;
  const next = Math.min(Math.max(span * k, MIN_WINDOW_US), limitUs);
  const frac = span > 0 ? (atUs - w.startUs) / span : 0.5;
  return clampWindow({ startUs: atUs - frac * next, endUs: atUs - frac * next + next }, limitUs);
}

/** Pan a window by dUs, clamped to [0, limitUs]. */
export function panWindow(w: TimeWindow, dUs: number, limitUs: number): TimeWindow {
  return clampWindow({ startUs: w.startUs + dUs, endUs: w.endUs + dUs }, limitUs);
}

export function clampWindow(w: TimeWindow, limitUs: number): TimeWindow {
  const span = Math.min(w.endUs - w.startUs, limitUs);
  let start = Math.max(0, w.startUs);
  if (start + span > limitUs) start = Math.max(0, limitUs - span);
  return { startUs: start, endUs: start + span };
}
