// Durations and their text. Times are µs everywhere (docs/ARCHITECTURE.md §5); a duration is
// written in the unit its size calls for ('846.6 µs', '12.35 ms', '1.20 s') or in a fixed unit
// for a table column, through the same d3-format fixed-point as sizes (units.ts).

import { MISSING, fixed } from './units';

type TimeUnit = 'µs' | 'ms' | 's';

const US_PER: Readonly<Record<TimeUnit, number>> = { µs: 1, ms: 1e3, s: 1e6 };

/** The unit a duration of `us` reads in: s from 1 s, ms from 1 ms, else µs. */
function timeUnitOf(us: number): TimeUnit {
  const a = Math.abs(us);
  return a >= 1e6 ? 's' : a >= 1e3 ? 'ms' : 'µs';
}

export interface DurationStyle {
  /** A fixed unit (a table column); absent: the unit the size calls for (`timeUnitOf`). */
  readonly unit?: TimeUnit;
  /** Decimals; absent: about four significant digits (2, or 1 from 10 µs and from 100 ms). */
  readonly digits?: number;
  /** The number alone, for a column whose header names the unit. */
  readonly bare?: boolean;
}

function defaultDigits(us: number, unit: TimeUnit): number {
  const a = Math.abs(us);
  if (unit === 's') return 2;
  if (unit === 'ms') return a >= 1e5 ? 1 : 2;
  return a >= 10 ? 1 : 2;
}

/** A duration of `us` microseconds as text: '846.6 µs', '12.35 ms', '1.20 s', '0 µs'. */
export function formatDuration(us: number | null | undefined, style: DurationStyle = {}): string {
  if (us === null || us === undefined || !Number.isFinite(us)) return MISSING;
  const unit = style.unit ?? timeUnitOf(us);
  // nothing at all reads '0 µs', not '0.00 µs' (a column's fixed digits keep its alignment)
  const digits = style.digits ?? (us === 0 ? 0 : defaultDigits(us, unit));
  const text = fixed(us === 0 ? 0 : us / US_PER[unit], digits);
  return style.bare ? text : `${text} ${unit}`;
}

/**
 * An axis tick: short form, no space ('231.7ms'). With the tick step, as many decimals as the
 * step needs, so a 1 µs window at 231.7 ms reads 231.7002ms, 231.7004ms … rather than 231.7ms.
 */
export function formatTimeTick(us: number, stepUs?: number): string {
  const unit = timeUnitOf(us);
  const div = US_PER[unit];
  if (stepUs === undefined || !(stepUs > 0)) return `${+(us / div).toPrecision(4)}${unit}`;
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(stepUs / div) - 1e-9)));
  return `${fixed(us / div, decimals)}${unit}`;
}
