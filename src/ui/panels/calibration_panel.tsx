// Calibration panel: load a real run's Kineto traces (one file per rank, .json or .json.gz), fit
// the ring model per process group and a time scale per op class against the current config
// (pipeline/calibrate.ts), draw estimated vs measured per collective (d3 scatter, log-log, the
// y = x line), and apply the fitted ring to the config (so the URL and exported traces carry it).

import { useEffect, useRef, useState } from 'react';
import { axisBottom, axisLeft, scaleLog, schemeTableau10, select } from 'd3';
import { calibrate, type Calibration, type GroupFit } from '../../pipeline/calibrate';
import { traceSamples } from '../../pipeline/calibrate_kineto';
import { appStore } from '../../store';
import { traceText } from '../../trace/gzip';

const SIZE = { width: 420, height: 260 };
const M = { top: 10, right: 12, bottom: 36, left: 56 };

function Scatter({ groups }: { groups: readonly GroupFit[] }) {
  const ref = useRef<SVGSVGElement>(null);
  useEffect(() => {
    const svg = ref.current;
    if (!svg) return;
    const root = select(svg);
    root.selectAll('*').remove();
    const pts = groups.flatMap((g, gi) => g.points.map((p) => ({ ...p, gi })));
    const all = pts.flatMap((p) => [p.measuredUs, p.estimatedUs]).filter((v) => v > 0);
    if (!all.length) return;
    const lo = Math.min(...all) / 1.2;
    const hi = Math.max(...all) * 1.2;
    const x = scaleLog()
      .domain([lo, hi])
      .range([M.left, SIZE.width - M.right]);
    const y = scaleLog()
      .domain([lo, hi])
      .range([SIZE.height - M.bottom, M.top]);
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
          `${p.name} (${p.kind}, ${p.bytes} B): measured ${p.measuredUs.toFixed(1)} µs, ` +
            `estimated ${p.estimatedUs.toFixed(1)} µs`,
      );
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
    latencyUs: +g.alphaUs.toFixed(3),
    bandwidthGBps: +(g.betaBytesPerS / 1e9).toFixed(3),
  });
}

export function CalibrationPanel() {
  const [fit, setFit] = useState<Calibration | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async (list: FileList | null) => {
    if (!list?.length) return;
    setBusy(true);
    try {
      const files = await Promise.all(
        [...list].map(async (f) => ({
          name: f.name,
          json: JSON.parse(await traceText(f.name, new Uint8Array(await f.arrayBuffer()))) as unknown,
        })),
      );
      const t = traceSamples(files);
      if (!t.ok) throw t.error;
      setFit(calibrate(t.value, appStore.getState().config));
      setError(null);
    } catch (e) {
      setFit(null);
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
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
      {fit && (
        <div className="grid-2">
          <Scatter groups={fit.groups} />
          <div className="small">
            <table data-testid="calib-groups">
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
                {fit.groups.map((g) => (
                  <tr key={`${g.group}|${g.groupSize}`} data-group={g.group}>
                    <td>{g.group}</td>
                    <td>{g.groupSize}</td>
                    <td data-col="alpha">{g.alphaUs.toFixed(3)}</td>
                    <td data-col="beta">{(g.betaBytesPerS / 1e9).toFixed(2)}</td>
                    <td>
                      {(g.rmsRelErr * 100).toFixed(2)} % / {(g.maxRelErr * 100).toFixed(2)} %
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
                {fit.scales.map((s) => (
                  <tr key={s.cls} data-cls={s.cls}>
                    <td>{s.cls}</td>
                    <td>{s.measuredUs.toFixed(1)}</td>
                    <td>{s.simulatedUs.toFixed(1)}</td>
                    <td data-col="scale">{Number.isFinite(s.scale) ? s.scale.toFixed(3) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </section>
  );
}
