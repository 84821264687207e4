// Calibration panel: load a real run's Kineto traces (one file per rank, .json or .json.gz), fit
// the ring model per process group and a time scale per op class against the current config
// (pipeline/calibrate.ts, in a worker: store/calibrate_job.ts), draw estimated vs measured per
// collective (d3 scatter, log-log, the y = x line), say for each group it could not fit why, and
// apply a fitted ring to the config (so the URL and exported traces carry it).

import { useEffect, useRef, useState } from 'react';
import { axisBottom, axisLeft, scaleLog, schemeTableau10, select, type ScaleLogarithmic, type Selection } from 'd3';
import {
  appStore,
  assumptionText,
  type CalibrateRun,
  type Calibration,
  type FitPoint,
  type GroupFit,
  startCalibration,
  unfittedText,
} from '../../store';
import { fmtPct, fmtUs } from '../ui_format';
import { fixed } from '../../util';

const SIZE = { width: 420, height: 260 };
const M = { top: 10, right: 12, bottom: 36, left: 56 };
/** Points drawn per group at most (evenly spaced over its collectives): SVG stays responsive. */
const MAX_POINTS = 2000;

/** At most MAX_POINTS of a group's points, evenly spaced. */
function drawn(points: readonly FitPoint[]): readonly FitPoint[] {
  if (points.length <= MAX_POINTS) return points;
  const step = points.length / MAX_POINTS;
  return Array.from({ length: MAX_POINTS }, (_, i) => points[Math.floor(i * step)]);
}

type Root = Selection<SVGSVGElement, unknown, null, undefined>;
type LogScale = ScaleLogarithmic<number, number>;
type Pt = FitPoint & { readonly gi: number };

/** Both log axes, their labels and the y = x line from lo to hi. */
function drawFrame(root: Root, x: LogScale, y: LogScale, lo: number, hi: number): void {
  root
    .append('g')
    .attr('class', 'chart-axis')
    .attr('transform', `translate(0,${SIZE.height - M.bottom})`)
    .call(axisBottom(x).ticks(5, '~s'));
  root
    .append('g')
    .attr('class', 'chart-axis')
    .attr('transform', `translate(${M.left},0)`)
    .call(axisLeft(y).ticks(5, '~s'));
  root
    .append('text')
    .attr('class', 'chart-axis-label')
    .attr('x', SIZE.width - M.right)
    .attr('y', SIZE.height - 4)
    .attr('text-anchor', 'end')
    .text('measured µs');
  root
    .append('text')
    .attr('class', 'chart-axis-label')
    .attr('x', 4)
    .attr('y', M.top + 8)
    .text('estimated µs');
  root
    .append('line')
    .attr('data-testid', 'calib-diagonal')
    .attr('x1', x(lo))
    .attr('y1', y(lo))
    .attr('x2', x(hi))
    .attr('y2', y(hi))
    .attr('stroke', 'currentColor')
    .attr('stroke-dasharray', '4 3')
    .attr('opacity', 0.5);
}

/** One circle per collective at (measured, estimated), coloured by its group. */
function drawPoints(root: Root, pts: readonly Pt[], x: LogScale, y: LogScale): void {
  root
    .append('g')
    .selectAll('circle')
    .data(pts)
    .join('circle')
    .attr('cx', (p) => x(p.measuredUs))
    .attr('cy', (p) => y(p.estimatedUs))
    .attr('r', 2.5)
    .attr('fill', (p) => schemeTableau10[p.gi % schemeTableau10.length])
    .attr('opacity', 0.7)
    .attr('class', 'calib-point')
    .append('title')
    .text(
      (p) =>
        `${p.name} (${p.kind}, ${p.bytes} B): measured ${fmtUs(p.measuredUs, { unit: 'µs', digits: 1 })}, ` +
        `estimated ${fmtUs(p.estimatedUs, { unit: 'µs', digits: 1 })}`,
    );
}

function drawScatter(svg: SVGSVGElement, groups: readonly GroupFit[]): void {
  const root = select(svg);
  root.selectAll('*').remove();
  const pts = groups.flatMap((g, gi) => drawn(g.points).map((p) => ({ ...p, gi })));
  let lo = Infinity;
  let hi = 0;
  for (const p of pts)
    for (const v of [p.measuredUs, p.estimatedUs])
      if (v > 0) {
        lo = Math.min(lo, v / 1.2);
        hi = Math.max(hi, v * 1.2);
      }
  if (!(hi > 0)) return;
  const x = scaleLog()
    .domain([lo, hi])
    .range([M.left, SIZE.width - M.right]);
  const y = scaleLog()
    .domain([lo, hi])
    .range([SIZE.height - M.bottom, M.top]);
  drawFrame(root, x, y, lo, hi);
  drawPoints(root, pts, x, y);
}

function Scatter({ groups }: { groups: readonly GroupFit[] }) {
  const ref = useRef<SVGSVGElement>(null);
  useEffect(() => {
    if (ref.current) drawScatter(ref.current, groups);
  }, [groups]);
  return (
    <svg
      ref={ref}
      width={SIZE.width}
      height={SIZE.height}
      data-testid="calib-scatter"
      role="img"
      aria-label="estimated against measured time per collective"
    />
  );
}

function applyRing(g: GroupFit): void {
  const st = appStore.getState();
  // a ring preset without a half-bandwidth size, its α and β overridden: the fitted model exactly
  st.setConfig({
    ...st.config,
    network: 'pcie-ethernet',
    latencyUs: +fixed(g.alphaUs, 3),
    bandwidthGBps: +fixed(g.betaBytesPerS / 1e9, 3),
  });
}

/** What the trace could not give, one sentence each, and the assumptions made. */
function Reasons({ fit }: { fit: Calibration }) {
  return (
    <>
      {fit.groups.length === 0 && (
        <p className="small" data-testid="calib-none">
          No process group could be fitted{fit.unfitted.length ? ':' : ' (the trace holds no collectives).'}
        </p>
      )}
      {fit.unfitted.length > 0 && (
        <ul className="small" data-testid="calib-unfitted" aria-label="groups not fitted, and why">
          {fit.unfitted.map(unfittedText).map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      )}
      {fit.notes.length > 0 && (
        <ul className="small muted" data-testid="calib-notes" aria-label="assumptions">
          {fit.notes.map(assumptionText).map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The ring fitted per process group, each with a button that applies it to the config. */
function GroupsTable({ groups }: { groups: readonly GroupFit[] }) {
  return (
    <table data-testid="calib-groups" hidden={groups.length === 0}>
      <thead>
        <tr>
          <th>group</th>
          <th>n</th>
          <th>α µs</th>
          <th>β GB/s</th>
          <th>error rms / max</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {groups.map((g) => (
          <tr key={`${g.group}|${g.groupSize}`} data-group={g.group}>
            <td>{g.group}</td>
            <td>{g.groupSize}</td>
            <td data-col="alpha">{fixed(g.alphaUs, 3)}</td>
            <td data-col="beta">{fixed(g.betaBytesPerS / 1e9, 2)}</td>
            <td>
              {fmtPct(g.rmsRelErr * 100, 2)} / {fmtPct(g.maxRelErr * 100, 2)}
            </td>
            <td>
              <button type="button" onClick={() => applyRing(g)} data-testid="calib-apply">
                Use this ring
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Measured against simulated time per op class, and the scale between them. */
function ScalesTable({ scales }: { scales: Calibration['scales'] }) {
  return (
    <table data-testid="calib-scales">
      <thead>
        <tr>
          <th>op class</th>
          <th>measured µs/step</th>
          <th>simulated µs/step</th>
          <th>scale</th>
        </tr>
      </thead>
      <tbody>
        {scales.map((s) => (
          <tr key={s.cls} data-cls={s.cls}>
            <td>{s.cls}</td>
            <td>{fixed(s.measuredUs, 1)}</td>
            <td>{fixed(s.simulatedUs, 1)}</td>
            <td data-col="scale">{fixed(s.scale, 3)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The fit of the files last loaded (in a worker), its error, and whether one is running. */
function useCalibration() {
  const [fit, setFit] = useState<Calibration | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useRef<CalibrateRun | null>(null);
  useEffect(() => () => run.current?.cancel(), []);
  const load = async (list: FileList | null) => {
    if (!list?.length) return;
    run.current?.cancel(); // new files replace a fit still running
    setBusy(true);
    const files = await Promise.all(
      [...list].map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })),
    );
    const r = startCalibration({ files, config: appStore.getState().config });
    run.current = r;
    const m = await r.result;
    if (run.current !== r) return; // replaced meanwhile
    run.current = null;
    setBusy(false);
    setFit(m.type === 'done' ? m.calibration : null);
    setError(m.type === 'error' ? m.error : null);
  };
  return { fit, error, busy, load };
}

export function CalibrationPanel() {
  const { fit, error, busy, load } = useCalibration();
  return (
    <section className="panel calib-panel" data-testid="calib-panel" aria-label="calibration from a real run">
      <h2>
        Calibrate from a real run{' '}
        <span className="muted small">
          Kineto traces, one file per rank; compute scales are against the current config
        </span>
      </h2>
      <input
        type="file"
        multiple
        accept=".json,.gz"
        onChange={(e) => void load(e.target.files)}
        data-testid="calib-files"
        aria-label="Kineto trace files"
      />
      {busy && <span className="small"> fitting…</span>}
      {error && (
        <p className="error small" role="alert" data-testid="calib-error">
          {error}
        </p>
      )}
      {fit && <Reasons fit={fit} />}
      {fit && (
        <div className="grid-2">
          {fit.groups.length > 0 ? <Scatter groups={fit.groups} /> : <div />}
          <div className="small">
            <GroupsTable groups={fit.groups} />
            <ScalesTable scales={fit.scales} />
          </div>
        </div>
      )}
    </section>
  );
}
