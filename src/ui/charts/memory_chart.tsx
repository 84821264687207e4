// Memory over time per backend: live bytes of rank 0 (or the first rank with a curve) for A and B.
// A live side (no measured memory) shows the simulated curve of the plan it ran, labelled so.

import { useMemo } from 'react';
import type { SimConfig } from '../../config';
import { livePlanOf, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { byteTicks, fmtBytes, fmtTick } from '../ui_format';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { HARDWARE_PRESETS } from '../../estimate';
import { hbmPeakOf, sideHbmFit } from '../hbm';
import { MEMORY_NAMES } from '../glossary';
import { LineChart, type RefLine, type Series } from './line_chart';

/** Below this share of HBM the line would flatten the curves to the floor: the legend names it instead. */
const HBM_LINE_SHARE = 0.5;

function curveOf(memory: SideResult['memory'] | undefined) {
  if (!memory?.length) return null;
  return [...memory].sort((x, y) => x.rank - y.rank)[0];
}

/** The side's curve, or for a live side its plan's simulated one (note says which). */
function sideCurve(r: SideResult | null, cfg: SimConfig) {
  const own = curveOf(r?.memory);
  if (own) return { c: own, note: '', hung: !!r?.mismatch };
  const plan = curveOf(livePlanOf(r, cfg)?.memory);
  const note = ', simulated for the live plan: a browser measures no device memory';
  return plan ? { c: plan, note, hung: false } : null;
}

/** One line under the chart: which side does not fit, or that both do, or that no peak is known. */
function HbmNote({ a, b, cfg, drawn }: { a: SideResult | null; b: SideResult | null; cfg: SimConfig; drawn: boolean }) {
  const bytes = fmtBytes(HARDWARE_PRESETS[cfg.hardware].hbmBytes);
  const hbm = `${cfg.hardware} HBM ${bytes}${drawn ? ' (dashed line)' : ''}`;
  const fits = (
    [
      ['A', a],
      ['B', b],
    ] as const
  ).flatMap(([k, r]) => {
    const f = r && Number.isFinite(hbmPeakOf(r)) ? sideHbmFit(r, cfg.hardware) : null;
    return f ? [{ k, fits: f.fits, what: f.what }] : [];
  });
  const overFits = fits.filter((f) => !f.fits);
  const over = overFits.map((f) => f.k);
  const whats = [...new Set(overFits.map((f) => f.what))].join(' / ');
  const hung = (
    [
      ['A', a],
      ['B', b],
    ] as const
  )
    .filter(([, r]) => r?.mismatch)
    .map(([k]) => k);
  const noClaim = hung.length
    ? ` ${hung.join(' and ')} ${hung.length > 1 ? 'hang' : 'hangs'}: not a full step, so no fit claim.`
    : '';
  let text = `${hbm}: no memory measured on these sides, so no fit claim.`;
  if (over.length) {
    const below = whats === MEMORY_NAMES.reserved ? `, below ${MEMORY_NAMES.reserved}` : '';
    text =
      `${over.join(' and ')} ${over.length > 1 ? 'do' : 'does'} not fit in ${hbm}: ${whats} passes it ` +
      `(the curves are live tensors${below}).${noClaim}`;
  } else if (fits.length) {
    text = `${fits.map((f) => f.k).join(' and ')} ${fits.length > 1 ? 'fit' : 'fits'} in ${hbm}.${noClaim}`;
  } else if (hung.length) text = `${hbm}:${noClaim}`;
  return (
    <p className={`small ${over.length ? 'warn-text' : 'muted'}`} data-testid="memory-hbm-note">
      {text}
    </p>
  );
}

export function MemoryChart() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const cfg = useApp((s) => s.config);
  const palette = paletteFor(useResolvedTheme());
  const series = useMemo(() => {
    const out: Series[] = [];
    const sa = sideCurve(a, cfg);
    const sb = sideCurve(b, cfg);
    const entry = (key: 'a' | 'b', title: string | undefined, s: NonNullable<typeof sa>, color: string): Series => ({
      key,
      color,
      x: s.c.t,
      y: s.c.bytes,
      step: true,
      label:
        `${key.toUpperCase()} ${title} (rank ${s.c.rank}, ${MEMORY_NAMES.live} ${fmtBytes(s.c.peakBytes)}` +
        `${s.hung ? ' to the hang' : ''}${s.note})`,
    });
    if (sa) out.push(entry('a', a?.title, sa, palette.compute));
    if (sb) out.push(entry('b', b?.title, sb, palette.reduce_scatter));
    return out;
  }, [a, b, cfg, palette]);
  const hbm = HARDWARE_PRESETS[cfg.hardware].hbmBytes;
  const peak = Math.max(0, ...series.flatMap((s) => s.y));
  const lines = useMemo(
    (): RefLine[] =>
      peak >= HBM_LINE_SHARE * hbm
        ? [{ key: 'hbm', y: hbm, label: `${cfg.hardware} HBM ${fmtBytes(hbm)}`, color: palette.mismatch }]
        : [],
    [peak, hbm, cfg.hardware, palette],
  );
  return (
    <section className="panel">
      <h2>Memory over time</h2>
      <LineChart
        series={series}
        refLines={lines}
        xFormat={fmtTick}
        yFormat={fmtBytes}
        yTicks={byteTicks}
        testId="memory-chart"
      />
      <HbmNote a={a} b={b} cfg={cfg} drawn={lines.length > 0} />
    </section>
  );
}
