// Calibration from a real run: fit, per process group, the α (latency per ring step) and β
// (bus bandwidth) of the simulator's ring model to the measured collectives of a Kineto trace, and
// a time scale per op class (matmul, attention, elementwise) from its compute kernels against the
// simulator's compute for the run's config. PyTorch does the like for its own estimates
// (torch._inductor comm_analysis calibrates from profiles); the model fitted is ours:
// T = k·((n−1)·α + ((n−1)/n)·S/β), k = 2 for all-reduce (reduce-scatter + all-gather), else 1.

import type { SimConfig } from '../config';
import { ImportError } from '../errors';
import { OP_CLASSES, type CollectiveSample, type OpClass, type TraceSamples } from './calibrate_kineto';
import { runPipeline } from './run';

export interface FitPoint {
  readonly name: string;
  readonly kind: string;
  readonly bytes: number;
  readonly measuredUs: number;
  readonly estimatedUs: number;
}

export interface GroupFit {
  readonly group: string;
  readonly groupSize: number;
  readonly samples: number;
  readonly alphaUs: number;
  readonly betaBytesPerS: number;
  /** Root-mean-square and largest |estimated − measured| / measured over the group's collectives. */
  readonly rmsRelErr: number;
  readonly maxRelErr: number;
  readonly points: readonly FitPoint[];
}

export interface ClassScale {
  readonly cls: OpClass;
  /** Per step and rank: the trace's kernels of the class, and the simulator's compute of the class. */
  readonly measuredUs: number;
  readonly simulatedUs: number;
  /** measured / simulated: what the cost model's times of the class are multiplied by to match the run. */
  readonly scale: number;
}

export interface Calibration {
  readonly groups: readonly GroupFit[];
  readonly scales: readonly ClassScale[];
}

/** The ring model's two regressors for one collective: T = α·a + (1/β)·b (b in bytes·µs/s units folded in). */
function regressors(s: Pick<CollectiveSample, 'kind' | 'groupSize' | 'bytes'>): [number, number] {
  const k = s.kind === 'all_reduce' ? 2 : 1;
  const n = s.groupSize;
  return [k * (n - 1), k * ((n - 1) / n) * s.bytes * 1e6]; // second × (1/β in s/byte) gives µs
}

/** The model's time of a collective under (α, β), µs. */
export function modelUs(
  s: Pick<CollectiveSample, 'kind' | 'groupSize' | 'bytes'>,
  alphaUs: number,
  betaBytesPerS: number,
): number {
  const [a, b] = regressors(s);
  return alphaUs * a + b / betaBytesPerS;
}

/**
 * Least squares on relative error (each equation divided by its measured time, so a 10 µs
 * all-gather weighs as much as a 10 ms one and α is not lost under the big transfers).
 */
function fitGroup(group: string, samples: readonly CollectiveSample[]): GroupFit {
  const n = samples[0].groupSize;
  let saa = 0;
  let sab = 0;
  let sbb = 0;
  let sa = 0;
  let sb = 0;
  for (const s of samples) {
    const [a, b] = regressors(s).map((x) => x / s.durUs);
    saa += a * a;
    sab += a * b;
    sbb += b * b;
    sa += a;
    sb += b;
  }
  const det = saa * sbb - sab * sab;
  if (!(Math.abs(det) > 1e-12 * saa * sbb))
    throw new ImportError(
      `group ${group}`,
      `group '${group}': its ${samples.length} collectives have one size (or none on n > 1 ranks): ` +
        'α and β cannot be told apart; profile steps with collectives of different sizes',
    );
  const alphaUs = (sa * sbb - sb * sab) / det;
  const invBeta = (saa * sb - sab * sa) / det;
  if (!(invBeta > 0))
    throw new ImportError(
      `group ${group}`,
      `group '${group}': the fit gives no positive bandwidth (1/β = ${invBeta}); the durations do not grow with size`,
    );
  const betaBytesPerS = 1 / invBeta;
  const points = samples.map((s) => ({
    name: s.name,
    kind: s.kind,
    bytes: s.bytes,
    measuredUs: s.durUs,
    estimatedUs: modelUs(s, alphaUs, betaBytesPerS),
  }));
  const rel = points.map((p) => Math.abs(p.estimatedUs - p.measuredUs) / p.measuredUs);
  return {
    group,
    groupSize: n,
    samples: samples.length,
    alphaUs,
    betaBytesPerS,
    rmsRelErr: Math.sqrt(rel.reduce((t, x) => t + x * x, 0) / rel.length),
    maxRelErr: Math.max(...rel),
    points,
  };
}

/** α and β per process group (and group size: a name reused at another size is another ring). */
export function fitCollectives(samples: readonly CollectiveSample[]): GroupFit[] {
  const groups = new Map<string, CollectiveSample[]>();
  for (const s of samples) {
    if (s.groupSize <= 1 || !(s.durUs > 0)) continue; // a one-rank collective moves nothing
    const key = `${s.group}|${s.groupSize}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()]
    .map((list) => fitGroup(list[0].group, list))
    .sort((x, y) => x.group.localeCompare(y.group));
}

/** The op class of a step-graph compute op: matmuls, attention (fwd and bwd), and the rest. */
export function opClassOfOp(op: string): OpClass {
  if (op === 'matmul') return 'matmul';
  if (op.startsWith('attention')) return 'attention';
  return 'elementwise';
}

/** The simulator's compute time per op class on rank 0 for one step of `cfg`, µs. */
export function simulatedClassUs(cfg: SimConfig): Record<OpClass, number> {
  const run = runPipeline(cfg, 'aot_eager', { emitRanks: [0] });
  const out: Record<OpClass, number> = {
    matmul: 0,
    attention: 0,
    elementwise: 0,
  };
  for (const e of run.sim.events) if (e.kind === 'compute') out[opClassOfOp(e.op ?? '')] += e.dur;
  return out;
}

/** Scales per op class: the trace's kernel time per step and rank over the simulator's. */
export function fitScales(
  t: Pick<TraceSamples, 'kernels' | 'steps' | 'ranks'>,
  simulated: Record<OpClass, number>,
): ClassScale[] {
  return OP_CLASSES.map((cls) => {
    const total = t.kernels.reduce((s, k) => s + (k.cls === cls ? k.durUs : 0), 0);
    const measuredUs = total / (t.steps * Math.max(1, t.ranks));
    const simulatedUs = simulated[cls];
    return {
      cls,
      measuredUs,
      simulatedUs,
      scale: simulatedUs > 0 ? measuredUs / simulatedUs : Number.NaN,
    };
  });
}

/** The whole calibration of a trace against the config of the run it came from. */
export function calibrate(t: TraceSamples, cfg: SimConfig): Calibration {
  return {
    groups: fitCollectives(t.collectives),
    scales: fitScales(t, simulatedClassUs(cfg)),
  };
}
