// Sweep panel: pick one or two config fields and their values (a list or a:b:step), run the cross
// product in the sweep worker (progress, Stop), and plot step time, exposed communication, peak
// memory and collective count against the first field, one line per backend (× the second
// field's values). Hover a point for its numbers; click it to load that config into the timelines.

import { useCallback, useMemo, useState } from 'react';
import { schemeTableau10 } from 'd3';
import { CONFIG_FIELDS } from '../../config';
import { mismatchText, sweepCsv, parseVary, type SweepAxis, type SweepRow, appStore } from '../../store';
import { useApp } from '../use_app';
import { SweepChart, type SweepSeries } from '../charts/sweep_chart';
import { downloadBlob } from '../download';
import { MEMORY_NAMES } from '../glossary';
import { forHand, useInputKind } from '../input_kind';
import { byteTicks, fmtBytes, fmtPct, fmtUs } from '../ui_format';
import { fixed } from '../../util';

/** The rows' times are ms: written as ms with two decimals. */
const MS = { unit: 'ms', digits: 2 } as const;

/** Fields a sweep may vary: every simulated one (the live-run fields never change a simulation). */
const FIELDS = CONFIG_FIELDS.filter((f) => !f.path.startsWith('live.')).map((f) => f.path);

interface Figure {
  readonly id: string;
  readonly title: string;
  readonly y: (r: SweepRow) => number;
  readonly fmt: (v: number) => string;
  /** Axis ticks in the unit on screen (sizes). */
  readonly ticks?: typeof byteTicks;
}

const FIGURES: readonly Figure[] = [
  {
    id: 'step',
    title: 'step time (ms)',
    y: (r) => r.stepTimeMs,
    fmt: (v) => fixed(v, v < 10 ? 2 : 0),
  },
  {
    id: 'exposed',
    title: 'exposed communication (ms)',
    y: (r) => r.exposedCommMs,
    fmt: (v) => fixed(v, v < 10 ? 2 : 0),
  },
  {
    id: 'peak',
    title: MEMORY_NAMES.live,
    y: (r) => r.peakMemoryBytes,
    fmt: fmtBytes,
    ticks: byteTicks,
  },
  {
    id: 'colls',
    title: 'collectives (#AG + #RS)',
    y: (r) => r.allGathers + r.reduceScatters,
    fmt: (v) => String(Math.round(v)),
  },
];

type Cell = number | string | boolean | null;

/** One line per backend (and per value of the second axis), points in sweep order. */
function seriesOf(rows: readonly SweepRow[], axes: readonly SweepAxis[], fig: Figure): SweepSeries[] {
  const [x, z] = axes;
  const groups = new Map<string, { label: string; rows: SweepRow[] }>();
  for (const r of rows) {
    const zv = z ? r.values[z.path] : undefined;
    const key = z ? `${r.backend}|${String(zv)}` : r.backend;
    const g = groups.get(key) ?? {
      label: z ? `${r.backend} · ${z.path}=${String(zv)}` : r.backend,
      rows: [],
    };
    g.rows.push(r);
    groups.set(key, g);
  }
  return [...groups.entries()].map(([key, g], i) => ({
    key,
    label: g.label,
    color: schemeTableau10[i % schemeTableau10.length],
    points: g.rows.map((r) => {
      const v = r.values[x.path] as Cell;
      return {
        x: typeof v === 'number' ? v : String(v),
        y: fig.y(r),
        point: r.point,
      };
    }),
  }));
}

function AxisInput({
  k,
  field,
  values,
  onField,
  onValues,
  optional,
}: {
  k: number;
  field: string;
  values: string;
  optional: boolean;
  onField: (f: string) => void;
  onValues: (v: string) => void;
}) {
  return (
    <div className="sweep-axis">
      <select
        value={field}
        onChange={(e) => onField(e.target.value)}
        data-testid={`sweep-field-${k}`}
        aria-label={`sweep field ${k + 1}`}
      >
        {optional && <option value="">(no second field)</option>}
        {FIELDS.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <input
        value={values}
        onChange={(e) => onValues(e.target.value)}
        disabled={!field}
        data-testid={`sweep-values-${k}`}
        placeholder="values: 1,2,4 or 0.5:10:0.5"
        aria-label={`values of sweep field ${k + 1}`}
      />
    </div>
  );
}

function Hover({ point, rows, axes }: { point: number; rows: readonly SweepRow[]; axes: readonly SweepAxis[] }) {
  const at = rows.filter((r) => r.point === point);
  if (!at.length) return null;
  const where = axes.map((a) => `${a.path} = ${String(at[0].values[a.path])}`).join(', ');
  return (
    <div className="sweep-hover small" data-testid="sweep-hover">
      <b>{where}</b>
      {at.map((r) => (
        <div key={r.backend}>
          {r.backend}: step {fmtUs(r.stepTimeMs * 1000, MS)} · exposed {fmtUs(r.exposedCommMs * 1000, MS)}
          {' · overlap '}
          {fmtPct(r.overlapPct, 1)} · peak {fmtBytes(r.peakMemoryBytes)} · {r.allGathers} AG / {r.reduceScatters} RS
          {r.fitsHbm ? '' : ' · does not fit HBM'}
          {r.hang ? ` · ${mismatchText(r.hang)}` : ''}
        </div>
      ))}
    </div>
  );
}

/** What the panel does, in the words of the hand on the screen ('tap a point' on touch). */
function SweepHint() {
  const input = useInputKind();
  return (
    <span className="muted small" data-testid="sweep-hint">
      {forHand('simulate a grid of configs; click a point to load it', input)}
    </span>
  );
}

interface ControlsProps {
  readonly onStart: () => void;
  readonly running: boolean;
  readonly progress: { readonly done: number; readonly total: number } | null;
  readonly axes: readonly SweepAxis[];
  readonly rows: readonly SweepRow[];
}

/** Run, Stop, the progress so far and the CSV export. */
function SweepControls({ onStart, running, progress, axes, rows }: ControlsProps) {
  const csv = () =>
    downloadBlob(new Blob([sweepCsv(axes, rows, mismatchText)], { type: 'text/csv' }), 'fsdp-sim-sweep.csv');
  return (
    <div className="sweep-controls">
      <button type="button" onClick={onStart} disabled={running} data-testid="sweep-run">
        Run sweep
      </button>
      <button
        type="button"
        onClick={() => appStore.getState().stopSweep()}
        disabled={!running}
        data-testid="sweep-stop"
      >
        Stop
      </button>
      {progress && (
        <span className="small">
          <progress value={progress.done} max={progress.total} data-testid="sweep-progress" /> {progress.done}/
          {progress.total} points{running ? '' : ' (done)'}
        </span>
      )}
      <button type="button" onClick={csv} disabled={!rows.length} data-testid="sweep-csv">
        Export CSV
      </button>
    </div>
  );
}

/** The two axes as typed (field and values text), and starting a sweep from them. */
function useAxesForm(axes: readonly SweepAxis[]) {
  const [f0, setF0] = useState(axes[0]?.path ?? 'autobucketing.max_in_flight_gb');
  const [v0, setV0] = useState(axes[0]?.values.join(',') ?? '0.5,1,2,5,10');
  const [f1, setF1] = useState(axes[1]?.path ?? '');
  const [v1, setV1] = useState(axes[1]?.values.join(',') ?? '');
  const [inputError, setInputError] = useState<string | null>(null);
  const start = () => {
    try {
      const specs = [parseVary(`${f0}=${v0}`), ...(f1 ? [parseVary(`${f1}=${v1}`)] : [])];
      setInputError(null);
      appStore.getState().startSweep(specs);
    } catch (e) {
      setInputError((e as Error).message);
    }
  };
  return { f0, setF0, v0, setV0, f1, setF1, v1, setV1, inputError, start };
}

export function SweepPanel() {
  const axes = useApp((s) => s.sweepAxes);
  const rows = useApp((s) => s.sweepRows);
  const progress = useApp((s) => s.sweepProgress);
  const running = useApp((s) => s.sweepRunning);
  const error = useApp((s) => s.sweepError);
  const { f0, setF0, v0, setV0, f1, setF1, v1, setV1, inputError, start } = useAxesForm(axes);
  const [hovered, setHovered] = useState<number | null>(null);
  const onPick = useCallback((p: number) => appStore.getState().loadSweepPoint(p), []);
  const series = useMemo(
    () => (axes.length ? FIGURES.map((f) => ({ f, s: seriesOf(rows, axes, f) })) : []),
    [rows, axes],
  );
  return (
    <section className="panel sweep-panel" data-testid="sweep-panel" aria-label="parameter sweep">
      <h2>
        Sweep <SweepHint />
      </h2>
      <AxisInput k={0} field={f0} values={v0} optional={false} onField={setF0} onValues={setV0} />
      <AxisInput k={1} field={f1} values={v1} optional onField={setF1} onValues={setV1} />
      <SweepControls onStart={start} running={running} progress={progress} axes={axes} rows={rows} />
      {(inputError ?? error) && (
        <p className="error small" role="alert" data-testid="sweep-error">
          {inputError ?? error}
        </p>
      )}
      {hovered !== null && <Hover point={hovered} rows={rows} axes={axes} />}
      {rows.length > 0 && (
        <div className="grid-2 sweep-charts">
          {series.map(({ f, s }) => (
            <SweepChart
              key={f.id}
              title={f.title}
              series={s}
              xLabel={axes[0].path}
              yFormat={f.fmt}
              yTicks={f.ticks}
              testId={`sweep-chart-${f.id}`}
              hovered={hovered}
              onHover={setHovered}
              onPick={onPick}
            />
          ))}
        </div>
      )}
    </section>
  );
}
