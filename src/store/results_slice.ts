// Results slice: what timelines A and B show (simulation, live run or import), plus the
// simulation's error and cost. Re-simulates on every config change.

import type { StoreApi } from 'zustand/vanilla';
import type { SimConfig } from '../config';
import { simulateConfig } from './engine';
import type { Notice, Side, SideResult } from './types';
import type { ViewSlice } from './view_slice';

export interface ResultsSlice {
  readonly sides: Readonly<Record<Side, SideResult | null>>;
  readonly simError: string | null;
  readonly simMs: number; // wall time of the last simulation (both backends)
  readonly notice: Notice | null;
  resimulate(cfg: SimConfig): void;
  setSide(side: Side, r: SideResult, keepWindow?: boolean): void;
  setNotice(n: Notice | null): void;
}

/** Zoom-out limit: the last event end over both sides (µs). */
export function limitOf(sides: Readonly<Record<Side, SideResult | null>>): number {
  let lim = 0;
  for (const r of [sides.a, sides.b]) {
    if (!r) continue;
    for (const e of r.events) lim = Math.max(lim, e.start + e.dur);
  }
  return lim;
}

export function createResultsSlice<S extends ResultsSlice & ViewSlice>(set: StoreApi<S>['setState'], get: () => S): ResultsSlice {
  const setPartial = (p: Partial<ResultsSlice & ViewSlice>) => set(p as Partial<S>);
  return {
    sides: { a: null, b: null },
    simError: null,
    simMs: 0,
    notice: null,
    resimulate: (cfg) => {
      const t0 = performance.now();
      try {
        const { a, b } = simulateConfig(cfg);
        const sides = { a, b };
        setPartial({ sides, simError: null, simMs: performance.now() - t0, selection: null });
        get().setLimit(limitOf(sides), false);
      } catch (e) {
        setPartial({ simError: `Simulation failed: ${(e as Error).message}`, simMs: performance.now() - t0 });
      }
    },
    setSide: (side, r, keepWindow = false) => {
      const sides = { ...get().sides, [side]: r };
      setPartial({ sides, selection: null });
      get().setLimit(limitOf(sides), keepWindow);
    },
    setNotice: (notice) => setPartial({ notice }),
  };
}
