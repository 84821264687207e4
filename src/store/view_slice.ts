// View slice: the shared time window both timelines draw (synchronized zoom/pan), the selected
// event, the theme, the story preset shown (its caption), the presentation view, the glossary and
// tour toggles. Canvas components subscribe to
// it imperatively; React reads small pieces.

import type { StoreApi } from 'zustand/vanilla';
import { clampWindow, panWindow, zoomWindow, type TimeWindow } from '../trace';
import type { Selection } from './store_types';

export type ThemeChoice = 'auto' | 'light' | 'dark';

export interface ViewSlice {
  /** Visible time window (µs), shared by timelines A and B. */
  readonly window: TimeWindow;
  /**
   * How far B's timeline is drawn after the shared window (µs): 0, except while Learn one layer follows
   * one op whose two runs lie far apart (src/ui/step_walk.ts followWindow). Each axis names its own times.
   */
  readonly shiftBUs: number;
  /** Longest step of the two sides (µs): the zoom-out limit. */
  readonly limitUs: number;
  readonly selection: Selection | null;
  readonly theme: ThemeChoice;
  /** Id of the story preset whose caption is shown (src/ui/stories.ts), or null. In the URL. */
  readonly story: string | null;
  /** The presentation view: bigger type, config tucked away, a next-story control. In the URL. */
  readonly present: boolean;
  setWindow(w: TimeWindow): void;
  setShiftB(us: number): void;
  /** k < 1 zooms in, around time atUs (default: the window centre). */
  zoomBy(k: number, atUs?: number): void;
  /** Pan by a fraction of the window width (negative: left). */
  panBy(frac: number): void;
  fitAll(): void;
  setLimit(limitUs: number, keepWindow: boolean): void;
  select(sel: Selection | null): void;
  setTheme(t: ThemeChoice): void;
  setStory(id: string | null): void;
  setPresent(on: boolean): void;
}

export function createViewSlice<S extends ViewSlice>(set: StoreApi<S>['setState'], get: () => S): ViewSlice {
  const setPartial = (p: Partial<ViewSlice>) => set(p as Partial<S>);
  return {
    window: { startUs: 0, endUs: 1 },
    shiftBUs: 0,
    limitUs: 1,
    selection: null,
    theme: 'auto',
    story: null,
    present: false,
    setWindow: (w) => setPartial({ window: clampWindow(w, get().limitUs) }),
    setShiftB: (us) => {
      if (us !== get().shiftBUs) setPartial({ shiftBUs: us });
    },
    zoomBy: (k, atUs) => {
      const { window: w, limitUs } = get();
      setPartial({ window: zoomWindow(w, k, atUs ?? (w.startUs + w.endUs) / 2, limitUs) });
    },
    panBy: (frac) => {
      const { window: w, limitUs } = get();
      setPartial({ window: panWindow(w, frac * (w.endUs - w.startUs), limitUs) });
    },
    fitAll: () => setPartial({ window: { startUs: 0, endUs: get().limitUs } }),
    setLimit: (limitUs, keepWindow) => {
      const lim = Math.max(limitUs, 1);
      const w = keepWindow ? clampWindow(get().window, lim) : { startUs: 0, endUs: lim };
      setPartial({ limitUs: lim, window: w });
    },
    select: (selection) => setPartial({ selection }),
    setTheme: (theme) => setPartial({ theme }),
    setStory: (story) => setPartial({ story }),
    setPresent: (present) => setPartial({ present }),
  };
}

/** The window a side's timeline draws: the shared one, B's shifted by shiftBUs. */
export function sideWindow(s: Pick<ViewSlice, 'window' | 'shiftBUs'>, side: 'a' | 'b'): TimeWindow {
  const d = side === 'b' ? s.shiftBUs : 0;
  return d === 0 ? s.window : { startUs: s.window.startUs + d, endUs: s.window.endUs + d };
}
