// Memory over time per backend: live bytes of rank 0 (or the first rank with a curve) for A and B.

import { useMemo } from 'react';
import { useApp, type SideResult } from '../../store';
import { fmtBytes, fmtTick } from '../format';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { LineChart, type Series } from './line_chart';

function curveOf(r: SideResult | null) {
  if (!r?.memory.length) return null;
  return [...r.memory].sort((x, y) => x.rank - y.rank)[0];
}

export function MemoryChart() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const palette = paletteFor(useResolvedTheme());
  const series = useMemo(() => {
    const out: Series[] = [];
    const ca = curveOf(a);
    const cb = curveOf(b);
    if (ca) out.push({ key: 'a', label: `A ${a?.title} (rank ${ca.rank}, peak ${fmtBytes(ca.peakBytes)})`, color: palette.compute, x: ca.t, y: ca.bytes, step: true });
    if (cb) out.push({ key: 'b', label: `B ${b?.title} (rank ${cb.rank}, peak ${fmtBytes(cb.peakBytes)})`, color: palette.reduce_scatter, x: cb.t, y: cb.bytes, step: true });
    return out;
  }, [a, b, palette]);
  return (
    <section className="panel">
      <h2>Memory over time</h2>
      <LineChart series={series} xFormat={fmtTick} yFormat={fmtBytes} testId="memory-chart" />
    </section>
  );
}
