// Sweep slice: the app's sweep (one or two varied fields, in the URL as `sweep=`), its rows as
// they arrive from the sweep worker, progress, Stop, and loading a point into the timelines.

import type { StoreApi } from 'zustand/vanilla';
import type { SimConfig } from '../config';
import { parseVary, sweepPoints, type SweepAxis, type SweepRow } from '../pipeline';
import { startSweepRun, type SweepRun } from './sweep_runner';

export interface SweepSlice {
  /** The varied fields and their values (what `sweep=` in the URL holds). */
  readonly sweepAxes: readonly SweepAxis[];
  /** The config the running / last sweep started from (a point is this with its values set). */
  readonly sweepBase: SimConfig | null;
  readonly sweepRows: readonly SweepRow[];
  readonly sweepProgress: {
    readonly done: number;
    readonly total: number;
  } | null;
  readonly sweepRunning: boolean;
  readonly sweepError: string | null;
  /** Check the axes against the config and run the sweep (replacing a running one). */
  startSweep(axes: readonly SweepAxis[]): void;
  stopSweep(): void;
  /** Load a point's config into the timelines (what a click on a plotted point does). */
  loadSweepPoint(index: number): void;
  clearSweep(): void;
}

interface Host {
  readonly config: SimConfig;
  setConfig(cfg: SimConfig): void;
}

const URL_AXIS_SEP = '|';
const FLUSH_MS = 150;

/** `sweep=` text: `path=v1,v2|path=v1,v2` (lists: a range is stored expanded). */
export const sweepToUrl = (axes: readonly SweepAxis[]): string =>
  axes.map((a) => `${a.path}=${a.values.join(',')}`).join(URL_AXIS_SEP);

/** Axes from `sweep=` text; a bad field or value throws the ConfigError naming it. */
export const sweepFromUrl = (text: string): SweepAxis[] => text.split(URL_AXIS_SEP).map(parseVary);

export function createSweepSlice<S extends SweepSlice & Host>(set: StoreApi<S>['setState'], get: () => S): SweepSlice {
  const setPartial = (p: Partial<SweepSlice>) => set(p as Partial<S>);
  let run: SweepRun | null = null;
  let generation = 0; // messages of a stopped or replaced run are dropped (a runner may answer synchronously)
  // rows reach the store at most every FLUSH_MS: fast points (tiny model: ms each) must not
  // re-render the plots per point, or the page has no time left for the Stop click
  let pending: {
    rows: SweepRow[];
    progress: SweepSlice['sweepProgress'];
  } | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!pending) return;
    setPartial({
      sweepRows: [...get().sweepRows, ...pending.rows],
      sweepProgress: pending.progress,
    });
    pending = null;
  };
  const stop = () => {
    generation++;
    run?.stop();
    run = null;
    flush(); // the points done so far stay
  };
  return {
    sweepAxes: [],
    sweepBase: null,
    sweepRows: [],
    sweepProgress: null,
    sweepRunning: false,
    sweepError: null,
    startSweep: (axes) => {
      stop();
      const base = get().config;
      const backends = [base.backendA, base.backendB].filter((b, i, xs) => xs.indexOf(b) === i);
      let total: number;
      try {
        total = sweepPoints(base, axes).length; // every value checked before any simulation
      } catch (e) {
        setPartial({
          sweepAxes: axes,
          sweepError: (e as Error).message,
          sweepRunning: false,
          sweepRows: [],
          sweepProgress: null,
        });
        return;
      }
      setPartial({
        sweepAxes: axes,
        sweepBase: base,
        sweepRows: [],
        sweepError: null,
        sweepRunning: true,
        sweepProgress: { done: 0, total },
      });
      const mine = ++generation;
      run = startSweepRun({ base, axes, backends }, (m) => {
        if (generation !== mine) return;
        if (m.type === 'rows') {
          pending = {
            rows: [...(pending?.rows ?? []), ...m.rows],
            progress: { done: m.done, total: m.total },
          };
          timer ??= setTimeout(flush, FLUSH_MS);
        } else {
          flush();
          run = null;
          setPartial({
            sweepRunning: false,
            ...(m.type === 'error' ? { sweepError: m.error } : {}),
          });
        }
      });
    },
    stopSweep: () => {
      stop();
      setPartial({ sweepRunning: false });
    },
    loadSweepPoint: (index) => {
      const { sweepBase, sweepAxes } = get();
      if (!sweepBase) return;
      const p = sweepPoints(sweepBase, sweepAxes)[index];
      if (p) get().setConfig(p.config);
    },
    clearSweep: () => {
      stop();
      setPartial({
        sweepAxes: [],
        sweepBase: null,
        sweepRows: [],
        sweepProgress: null,
        sweepRunning: false,
        sweepError: null,
      });
    },
  };
}
