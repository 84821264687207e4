// The y scale and left axis the charts share: 4 ticks, in a byte unit's ticks when the chart has a
// yTicks (its domain then ends on that unit's top tick), else d3's nice domain and yFormat.

import { axisLeft, scaleLinear } from 'd3';
import type { ByteTicks } from '../ui_format';

export interface YAxisFormat {
  readonly yFormat: (v: number) => string;
  readonly yTicks?: (lo: number, hi: number, count: number) => ByteTicks;
}

/** The y scale over [lo, hi] on `range` and its axis; the ticks are computed once, for both. */
export function yAxisOf(lo: number, hi: number, range: [number, number], p: YAxisFormat) {
  const t = p.yTicks?.(lo, hi, 4);
  const y = t ? scaleLinear().domain(t.domain) : scaleLinear().domain([lo, hi]).nice();
  y.range(range);
  const axis = t
    ? axisLeft(y)
        .tickValues(t.ticks)
        .tickFormat((d) => t.label(Number(d)))
    : axisLeft(y)
        .ticks(4)
        .tickFormat((d) => p.yFormat(Number(d)));
  return { y, axis };
}
