// Bench statistics and reporting: repeated runs (their medians: util's midpointMedian), a plain-text
// table, and the machine description printed beside every figure (these machines are shared and noisy).

import os from 'node:os';

/** Run fn `reps` times after `warmup` untimed runs; returns each run's wall time in ms. */
export async function timeRuns(fn: () => unknown | Promise<unknown>, reps: number, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

export function machine(): Record<string, string | number> {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export interface Row {
  readonly section: string;
  readonly case: string;
  readonly value: string; // ours
  readonly baseline: string; // the same-run baseline
  readonly ratio: string; // ours / baseline (or baseline / ours when lower is better), with the direction
  readonly target: string;
  readonly met: boolean | null; // null: no target
}

export function printTable(rows: readonly Row[]): string {
  const head: Row = {
    section: 'section',
    case: 'case',
    value: 'ours',
    baseline: 'baseline',
    ratio: 'ratio',
    target: 'target',
    met: null,
  };
  const cells = (r: Row) => [
    r.section,
    r.case,
    r.value,
    r.baseline,
    r.ratio,
    r.target,
    r === head ? 'met' : r.met === null ? '' : r.met ? 'yes' : 'NO',
  ];
  const all = [head, ...rows].map(cells);
  const widths = all[0].map((_, i) => Math.max(...all.map((c) => c[i].length)));
  return all.map((c) => c.map((x, i) => x.padEnd(widths[i])).join('  ')).join('\n');
}

export const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : String(x));
