// Number formatting for the UI: durations from µs, sizes from bytes, percentages.

export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return '–';
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(a >= 1e5 ? 1 : 2)} ms`;
  if (a >= 10) return `${us.toFixed(1)} µs`;
  return `${us.toFixed(2)} µs`;
}

/**
 * Axis ticks: short form. With the tick step, as many decimals as the step needs, so a 1 µs
 * window at 231.7 ms reads 231.7002ms, 231.7004ms … rather than 231.7ms on every tick.
 */
export function fmtTick(us: number, stepUs?: number): string {
  const a = Math.abs(us);
  const [div, unit] = a >= 1e6 ? [1e6, 's'] : a >= 1e3 ? [1e3, 'ms'] : [1, 'µs'];
  if (stepUs === undefined || !(stepUs > 0)) return `${+(us / div).toPrecision(4)}${unit}`;
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(stepUs / div) - 1e-9)));
  return `${(us / div).toFixed(decimals)}${unit}`;
}

/** Sizes from bytes: the project's one byte formatter (src/util/units.ts). */
export { formatBytes as fmtBytes } from '../util';

export function fmtPct(p: number): string {
  return Number.isFinite(p) ? `${p.toFixed(1)} %` : '–';
}

/** Signed relative change of b against a: '−42.0 %'. */
export function fmtDelta(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return '–';
  if (a === 0) return b === 0 ? '0' : 'new';
  const d = ((b - a) / Math.abs(a)) * 100;
  if (Math.abs(d) >= 1000) return `${(b / a).toFixed(0)}×`; // '+2400 %' reads worse than '25×'
  return `${d > 0 ? '+' : d < 0 ? '−' : ''}${Math.abs(d).toFixed(1)} %`;
}
