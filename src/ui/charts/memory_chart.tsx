// Memory over time per backend: live bytes of rank 0 (or the first rank with a curve) for A and B.
// A live side (no measured memory) shows the simulated curve of the plan it ran, labelled so.

import { useMemo } from 'react';
import type { SimConfig } from '../../config';
import { livePlanOf, useApp, type SideResult } from '../../store';
import { fmtBytes, fmtTick } from '../format';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { LineChart, type Series } from './line_chart';

function curveOf(memory: SideResult['memory'] | undefined) {
  if (!memory?.length) return null;
  return [...memory].sort((x, y) => x.rank - y.rank)[0];
}

/** The side's curve, or for a live side its plan's simulated one (note says which). */
function sideCurve(r: SideResult | null, cfg: SimConfig) {
  const own = curveOf(r?.memory);
  if (own) return { c: own, note: '' };
  const plan = curveOf(livePlanOf(r, cfg)?.memory);
  return plan ? { c: plan, note: ', simulated for the live plan: a browser measures no device memory' } : null;
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
    if (sa) out.push({ key: 'a', label: `A ${a?.title} (rank ${sa.c.rank}, peak ${fmtBytes(sa.c.peakBytes)}${sa.note})`, color: palette.compute, x: sa.c.t, y: sa.c.bytes, step: true });
    if (sb) out.push({ key: 'b', label: `B ${b?.title} (rank ${sb.c.rank}, peak ${fmtBytes(sb.c.peakBytes)}${sb.note})`, color: palette.reduce_scatter, x: sb.c.t, y: sb.c.bytes, step: true });
    return out;
  }, [a, b, cfg, palette]);
  return (
    <section className="panel">
      <h2>Memory over time</h2>
      <LineChart series={series} xFormat={fmtTick} yFormat={fmtBytes} testId="memory-chart" />
    </section>
  );
}
