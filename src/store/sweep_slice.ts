// Sweep slice: the app's sweep (one or two varied fields, in the URL as `sweep=`), its rows as
// they arrive from the sweep worker, progress, Stop, and loading a point into the timelines.

import type { StoreApi } from 'zustand/vanilla';
import type { SimConfig } from '../config';
import { parseVary, sweepPoints, type SweepAxis, type SweepRow } from '../pipeline';
import { startSweepRun, type SweepMessage, type SweepRequest, type SweepRun } from './sweep_runner';

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

type SweepProgress = SweepSlice['sweepProgress'];

/**
 * Rows reach the store at most every FLUSH_MS: fast points (tiny model: ms each) must not
 * re-render the plots per point, or the page has no time left for the Stop click.
 */
class RowBatcher {
  private pending: { rows: SweepRow[]; progress: SweepProgress } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly emit: (rows: readonly SweepRow[], progress: SweepProgress) => void) {}

  add(rows: readonly SweepRow[], progress: SweepProgress): void {
    this.pending = { rows: [...(this.pending?.rows ?? []), ...rows], progress };
    this.timer ??= setTimeout(this.flush, FLUSH_MS);
  }

  readonly flush = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending) return;
    const { rows, progress } = this.pending;
    this.pending = null;
    this.emit(rows, progress);
  };
}

/** The one sweep running at a time; messages of a stopped or replaced run are dropped. */
class SweepDriver {
  private run: SweepRun | null = null;
  private generation = 0; // a runner may answer synchronously, so each run checks it is still the latest

  constructor(
    private readonly rows: RowBatcher,
    private readonly setPartial: (p: Partial<SweepSlice>) => void,
  ) {}

  start(req: SweepRequest): void {
    const mine = ++this.generation;
    this.run = startSweepRun(req, (m) => {
      if (this.generation === mine) this.receive(m);
    });
  }

  stop(): void {
    this.generation++;
    this.run?.stop();
    this.run = null;
    this.rows.flush(); // the points done so far stay
  }

  private receive(m: SweepMessage): void {
    if (m.type === 'rows') {
      this.rows.add(m.rows, { done: m.done, total: m.total });
      return;
    }
    this.rows.flush();
    this.run = null;
    this.setPartial({ sweepRunning: false, ...(m.type === 'error' ? { sweepError: m.error } : {}) });
  }
}

/** Checks the axes against the config (every value, before any simulation), then starts the sweep. */
function startSweepOn(
  driver: SweepDriver,
  base: SimConfig,
  axes: readonly SweepAxis[],
  setPartial: (p: Partial<SweepSlice>) => void,
): void {
  driver.stop();
  const backends = [base.backendA, base.backendB].filter((b, i, xs) => xs.indexOf(b) === i);
  let total: number;
  try {
    total = sweepPoints(base, axes).length;
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
  driver.start({ base, axes, backends });
}

export function createSweepSlice<S extends SweepSlice & Host>(set: StoreApi<S>['setState'], get: () => S): SweepSlice {
  const setPartial = (p: Partial<SweepSlice>) => set(p as Partial<S>);
  const rows = new RowBatcher((more, progress) =>
    setPartial({ sweepRows: [...get().sweepRows, ...more], sweepProgress: progress }),
  );
  const driver = new SweepDriver(rows, setPartial);
  return {
    sweepAxes: [],
    sweepBase: null,
    sweepRows: [],
    sweepProgress: null,
    sweepRunning: false,
    sweepError: null,
    startSweep: (axes) => startSweepOn(driver, get().config, axes, setPartial),
    stopSweep: () => {
      driver.stop();
      setPartial({ sweepRunning: false });
    },
    loadSweepPoint: (index) => {
      const { sweepBase, sweepAxes } = get();
      if (!sweepBase) return;
      const p = sweepPoints(sweepBase, sweepAxes)[index];
      if (p) get().setConfig(p.config);
    },
    clearSweep: () => {
      driver.stop();
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
