// Where a live step's time goes, on one rank: wall-clock ms in compute kernels, in collective
// copies and sums, waiting at collective barriers, in GPU → host readbacks and host → GPU uploads,
// and compiling pipelines (first use). Spans nest: a readback inside a collective counts as
// readback, not twice, so the phases add up to the step's time; `other` is what no span covered
// (executor bookkeeping), and tests hold it under 5 % of the step.
// Follows the idea of HTA's temporal breakdown (compute / communication / idle), per rank and step.

import { formatDuration } from '../../util';

export const PHASES = ['compute', 'collective', 'barrier', 'readback', 'upload', 'compile'] as const;
export type ExecPhase = (typeof PHASES)[number];

/** One rank's step: its wall time and the time per phase, all ms. other = stepMs − Σ phases. */
export type StepPhases = Readonly<Record<ExecPhase | 'other' | 'stepMs', number>>;

/** One timed interval of a step (measured timing mode): ms since the step started. */
export interface PhaseInterval {
  readonly phase: ExecPhase;
  readonly name: string;
  readonly startMs: number;
  readonly durMs: number;
}

const now = (): number => globalThis.performance.now();

/** Every phase at 0 ms, in PHASES order. */
const zeroPhases = (): Record<ExecPhase, number> =>
  Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<ExecPhase, number>;

export class PhaseClock {
  private readonly ms = zeroPhases();
  private attributed = 0; // ms already given to a phase: an enclosing span subtracts it
  private readonly t0 = now();
  /** Intervals of the step, kept only when asked (measured mode: the wall-clock timeline). */
  readonly intervals: PhaseInterval[] | undefined;

  constructor(record = false) {
    this.intervals = record ? [] : undefined;
  }

  /** Give `durMs` that ended at `endMs` (performance.now) to `phase`. */
  add(phase: ExecPhase, durMs: number, name: string = phase, endMs: number = now()): void {
    if (!(durMs > 0)) return;
    this.ms[phase] += durMs;
    this.attributed += durMs;
    this.intervals?.push({ phase, name, startMs: endMs - durMs - this.t0, durMs });
  }

  /** Time `fn` as `phase`, less whatever nested spans and add() calls took meanwhile. */
  span<T>(phase: ExecPhase, name: string, fn: () => T): T {
    const a0 = this.attributed;
    const t = now();
    try {
      return fn();
    } finally {
      this.close(phase, name, t, a0);
    }
  }

  async spanAsync<T>(phase: ExecPhase, name: string, fn: () => Promise<T>): Promise<T> {
    const a0 = this.attributed;
    const t = now();
    try {
      return await fn();
    } finally {
      this.close(phase, name, t, a0);
    }
  }

  private close(phase: ExecPhase, name: string, t: number, a0: number): void {
    const end = now();
    const own = end - t - (this.attributed - a0);
    this.ms[phase] += own;
    this.attributed += own;
    this.intervals?.push({ phase, name, startMs: t - this.t0, durMs: end - t });
  }

  /** The step so far: phases plus `other`, the time no span covered. */
  result(): StepPhases {
    const stepMs = now() - this.t0;
    return { stepMs, ...this.ms, other: stepMs - this.attributed };
  }
}

/** Sum of rows, phase by phase (the mean is this over the row count). */
function sumPhases(rows: readonly StepPhases[]): StepPhases {
  const out: Record<string, number> = { stepMs: 0, other: 0, ...zeroPhases() };
  for (const r of rows) for (const k of Object.keys(out)) out[k] += r[k as keyof StepPhases];
  return out as StepPhases;
}

/**
 * The step breakdown a report prints: every row rounded to µs, and the mean row over every rank of
 * every step after the first (the first compiles and warms up; it is the mean when it is the only one).
 */
export function phaseReport(perStep: readonly (readonly StepPhases[])[]): {
  readonly unit: 'ms';
  readonly mean: StepPhases;
  readonly perStep: StepPhases[][];
} {
  const round = (r: StepPhases): StepPhases =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v * 1000) / 1000])) as StepPhases;
  const steady = perStep.length > 1 ? perStep.slice(1) : perStep;
  const rows = steady.flat();
  const sum = sumPhases(rows);
  const mean = Object.fromEntries(
    Object.entries(sum).map(([k, v]) => [k, rows.length > 0 ? v / rows.length : 0]),
  ) as StepPhases;
  return { unit: 'ms', mean: round(mean), perStep: perStep.map((ranks) => ranks.map(round)) };
}

/** One line: `stepMs 12.3 = compute 8.1 + collective 1.2 + …` (ms). */
export function formatPhases(p: StepPhases): string {
  const ms = (x: number, bare = true) => formatDuration(x * 1000, { unit: 'ms', digits: 2, bare });
  const parts = [...PHASES, 'other' as const].map((k) => `${k} ${ms(p[k])}`);
  return `step ${ms(p.stepMs, false)} = ${parts.join(' + ')}`;
}
