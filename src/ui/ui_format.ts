// Number formatting for the UI: durations from µs, sizes from bytes, percentages.

import { MISSING, fixed, formatPercent } from '../util';

/** Durations from µs and axis ticks: the project's one time formatter (src/util/time.ts). */
export { formatDuration as fmtUs, formatTimeTick as fmtTick } from '../util';

/** Sizes from bytes: the project's one byte formatter (src/util/units.ts). */
export { formatBytes as fmtBytes } from '../util';

/** Axis ticks over sizes: round numbers in the unit on screen (GiB), not in bytes (src/util/units.ts). */
export { byteTicks, type ByteTicks } from '../util';

/** Percentages: the project's one percent formatter (src/util/percent.ts). */
export { formatPercent as fmtPct } from '../util';

/** Signed relative change of b against a: '−42.0 %'. */
export function fmtDelta(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return MISSING;
  if (a === 0) return b === 0 ? '0' : 'new';
  const d = ((b - a) / Math.abs(a)) * 100;
  if (Math.abs(d) >= 1000) return `${fixed(b / a, 0)}×`; // '+2400 %' reads worse than '25×'
  return `${d > 0 ? '+' : d < 0 ? '−' : ''}${formatPercent(Math.abs(d))}`;
}
