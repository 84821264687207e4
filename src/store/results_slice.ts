// Results slice: what timelines A and B show (simulation, live run or import), plus the
// simulation's error and cost. Re-simulates on every config change.

import type { StoreApi } from 'zustand/vanilla';
import type { SimConfig } from '../config';
import { SimSuperseded, createSimRunner, type SimRunner } from './sim_runner';
import { SIDES, type Notice, type Selection, type Side, type SideResult } from './store_types';
import type { ViewSlice } from './view_slice';

export interface ResultsSlice {
  readonly sides: Readonly<Record<Side, SideResult | null>>;
  readonly simError: string | null;
  readonly simMs: number; // wall time of the last simulation (both backends)
  readonly simulating: boolean;
  readonly notice: Notice | null;
  /** Simulate both backends (in a worker in the browser); resolves when the sides are set. */
  resimulate(cfg: SimConfig): Promise<void>;
  /** Resolves once no simulation is in flight (the latest one landed, failed or none was asked). */
  whenSimulated(): Promise<void>;
  setSide(side: Side, r: SideResult, keepWindow?: boolean): void;
  /** A view (window, selection) to apply once the next simulation lands: a shared link's view. */
  restoreViewAfterSim(v: PendingView): void;
  setNotice(n: Notice | null): void;
}

interface PendingView {
  readonly window?: ViewSlice['window'];
  /** A window as fractions of the zoom-out limit (the first screen's zoom), when `window` is unset. */
  readonly fraction?: readonly [number, number];
  readonly selection?: Selection;
}

/** How long notices stay before they dismiss themselves (errors longer: they need reading). */
const NOTICE_INFO_MS = 6_000;
const NOTICE_ERROR_MS = 15_000;

/** Zoom-out limit: the last event end over both sides (µs). */
function limitOf(sides: Readonly<Record<Side, SideResult | null>>): number {
  let lim = 0;
  for (const side of SIDES) {
    const r = sides[side];
    if (!r) continue;
    for (const e of r.events) lim = Math.max(lim, e.start + e.dur);
  }
  return lim;
}

export function createResultsSlice<S extends ResultsSlice & ViewSlice>(
  set: StoreApi<S>['setState'],
  get: () => S,
): ResultsSlice {
  const setPartial = (p: Partial<ResultsSlice & ViewSlice>) => set(p as Partial<S>);
  let runner: SimRunner | null = null; // created on first use (a Worker in the browser)
  let pendingView: PendingView | null = null;
  let noticeTimer: ReturnType<typeof setTimeout> | null = null;
  let latest: Promise<void> = Promise.resolve();
  const applyPending = (sides: Readonly<Record<Side, SideResult | null>>) => {
    if (!pendingView) return;
    const { window: w, fraction: f, selection: sel } = pendingView;
    pendingView = null;
    const lim = get().limitUs;
    if (w) get().setWindow(w);
    else if (f) get().setWindow({ startUs: f[0] * lim, endUs: f[1] * lim });
    if (sel && sel.eventIndex < (sides[sel.side]?.events.length ?? 0)) get().select(sel);
  };
  const simulate = async (cfg: SimConfig): Promise<void> => {
    runner ??= createSimRunner();
    setPartial({ simulating: true });
    try {
      const { a, b, ms } = await runner.run(cfg);
      const sides = { a, b };
      setPartial({ sides, simError: null, simMs: ms, simulating: false, selection: null });
      get().setLimit(limitOf(sides), false);
      applyPending(sides);
    } catch (e) {
      if (e instanceof SimSuperseded) return; // a newer request owns the state now
      setPartial({ simError: `Simulation failed: ${(e as Error).message}`, simulating: false });
    }
  };
  return {
    sides: { a: null, b: null },
    simError: null,
    simMs: 0,
    simulating: false,
    notice: null,
    resimulate: (cfg) => {
      latest = simulate(cfg);
      return latest;
    },
    whenSimulated: async () => {
      // a superseded run resolves early: wait for whichever one is latest when it does
      for (let p = latest; ; p = latest) {
        await p;
        if (p === latest) return;
      }
    },
    restoreViewAfterSim: (v) => {
      pendingView = v;
    },
    setSide: (side, r, keepWindow = false) => {
      const sides = { ...get().sides, [side]: r };
      setPartial({ sides, selection: null });
      get().setLimit(limitOf(sides), keepWindow);
    },
    setNotice: (notice) => {
      setPartial({ notice });
      if (noticeTimer) clearTimeout(noticeTimer);
      noticeTimer = notice
        ? setTimeout(
            () => get().notice === notice && setPartial({ notice: null }),
            notice.kind === 'error' ? NOTICE_ERROR_MS : NOTICE_INFO_MS,
          )
        : null;
    },
  };
}
