// Metrics table: HTA-style metrics of A and B side by side with B's change against A.

import { describeHbmFit, hbmFit, type HbmFit } from '../../config';
import type { HardwareName } from '../../estimate';
import { useApp, type SideResult } from '../../store';
import type { TraceMetrics } from '../../trace/metrics';
import { fmtBytes, fmtDelta, fmtPct, fmtUs } from '../format';

interface Row {
  readonly key: string;
  readonly label: string;
  readonly get: (m: TraceMetrics, r: SideResult) => number;
  readonly fmt: (v: number) => string;
  readonly lowerIsBetter: boolean;
}

const ROWS: readonly Row[] = [
  { key: 'step', label: 'step time', get: (m) => m.stepTimeUs, fmt: fmtUs, lowerIsBetter: true },
  { key: 'exposed', label: 'exposed comm', get: (m) => m.exposedCommUs, fmt: fmtUs, lowerIsBetter: true },
  { key: 'overlap', label: 'overlap', get: (m) => m.overlapPct, fmt: fmtPct, lowerIsBetter: false },
  { key: 'idle', label: 'idle', get: (m) => m.idleUs, fmt: fmtUs, lowerIsBetter: true },
  // live runs and Kineto imports may carry no memory curve: unknown, not zero
  { key: 'peak', label: 'peak memory', get: (m, r) => (r.memory.length ? m.peakMemoryBytes : NaN), fmt: fmtBytes, lowerIsBetter: true },
  { key: 'ag', label: '# all-gather', get: (m) => m.collectives.all_gather, fmt: String, lowerIsBetter: true },
  { key: 'rs', label: '# reduce-scatter', get: (m) => m.collectives.reduce_scatter, fmt: String, lowerIsBetter: true },
];

/** Column heads stay short: 'aot_eager_autobucketing' → 'autobucketing' (full name in the tooltip). */
function shortTitle(t: string | undefined): string {
  return t ? t.replace(/^aot_eager_(?=\w)/, '') : '–';
}

/** Sides whose peak memory exceeds the hardware's HBM (unknown peaks make no claim). */
function overHbm(sides: readonly [string, SideResult | null | undefined][], hardware: HardwareName): { side: string; fit: HbmFit }[] {
  return sides.flatMap(([side, r]) => {
    if (!r || !r.memory.length) return [];
    const fit = hbmFit(r.metrics.peakMemoryBytes, hardware);
    return fit.fits ? [] : [{ side, fit }];
  });
}

export function MetricsTable() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const hardware = useApp((s) => s.config.hardware);
  const over = overHbm([['A', a], ['B', b]], hardware);
  return (
    <section className="panel metrics" data-testid="metrics">
      <h2>Metrics <span className="muted">(mean over ranks; HTA definitions)</span></h2>
      <table>
        <colgroup><col className="label" /><col /><col /><col className="delta" /></colgroup>
        <thead>
          <tr><th /><th title={a?.title}><span className="side-badge side-a">A</span> {shortTitle(a?.title)}</th><th title={b?.title}><span className="side-badge side-b">B</span> {shortTitle(b?.title)}</th><th>B vs A</th></tr>
        </thead>
        <tbody>
          {ROWS.map((r) => {
            const va = a ? r.get(a.metrics, a) : NaN;
            const vb = b ? r.get(b.metrics, b) : NaN;
            const better = Number.isFinite(va) && Number.isFinite(vb) && va !== vb && (vb < va) === r.lowerIsBetter;
            const worse = Number.isFinite(va) && Number.isFinite(vb) && va !== vb && !better;
            return (
              <tr key={r.key} data-metric={r.key} className={r.key === 'peak' && over.length > 0 ? 'warn-text' : undefined}>
                <th>{r.label}</th>
                <td data-side="a" data-value={String(va)}>{a && Number.isFinite(va) ? r.fmt(va) : '–'}</td>
                <td data-side="b" data-value={String(vb)}>{b && Number.isFinite(vb) ? r.fmt(vb) : '–'}</td>
                <td className={better ? 'better' : worse ? 'worse' : ''}>
                  {r.key === 'overlap' ? (Number.isFinite(va - vb) ? `${vb - va >= 0 ? '+' : '−'}${Math.abs(vb - va).toFixed(1)} pt` : '–') : fmtDelta(va, vb)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {over.length > 0 && (
        <p className="small warn-text" data-testid="metrics-hbm-warning" role="alert">
          Does not fit in HBM: {over.map((o) => `${o.side} ${describeHbmFit(o.fit)}`).join('; ')}. Activation checkpointing
          (activationCheckpointing=full) or more ranks would lower the peak.
        </p>
      )}
      {(a?.mismatch || b?.mismatch) && (
        <p className="small warn-text" data-testid="metrics-mismatch-note">
          {a?.mismatch ? 'A' : 'B'} hit a collective mismatch: its step stops at the hang, so its numbers are not a full step.
        </p>
      )}
    </section>
  );
}
