// Number formatting for the UI: durations from µs, sizes from bytes, percentages.

export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return '–';
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(a >= 1e5 ? 1 : 2)} ms`;
  if (a >= 10) return `${us.toFixed(1)} µs`;
  return `${us.toFixed(2)} µs`;
}

/** Axis ticks: short form. */
export function fmtTick(us: number): string {
  const a = Math.abs(us);
  if (a >= 1e6) return `${+(us / 1e6).toPrecision(4)}s`;
  if (a >= 1e3) return `${+(us / 1e3).toPrecision(4)}ms`;
  return `${+us.toPrecision(4)}µs`;
}

export function fmtBytes(b: number): string {
  if (!Number.isFinite(b)) return '–';
  const a = Math.abs(b);
  if (a >= 2 ** 30) return `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (a >= 2 ** 20) return `${(b / 2 ** 20).toFixed(2)} MiB`;
  if (a >= 2 ** 10) return `${(b / 2 ** 10).toFixed(1)} KiB`;
  return `${b} B`;
}

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
