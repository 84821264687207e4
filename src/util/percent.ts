// Percentages and their text: '57.3 %', a space before the sign as in the rest of the app's
// units, through the same d3-format fixed-point as sizes (units.ts).

import { MISSING, fixed } from './units';

/** `points` percent with `digits` decimals: '57.3 %'; MISSING when not finite. */
export function formatPercent(points: number, digits = 1): string {
  return Number.isFinite(points) ? `${fixed(points, digits)} %` : MISSING;
}

/** The share `part` of `whole` as a percentage: formatPercent(100 · part / whole); 0 % of nothing. */
export function formatShare(part: number, whole: number, digits = 1): string {
  return formatPercent(whole > 0 ? (100 * part) / whole : 0, digits);
}
