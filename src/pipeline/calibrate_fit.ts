// The ring model's fit per process group: T = k·((n−1)·α + ((n−1)/n)·S/β), k = 2 for all-reduce
// (reduce-scatter + all-gather), else 1; least squares on relative error. A group that cannot be
// fitted gets the reason why, with the facts of its collectives (src/words/ words it).

import type { CalibKind } from './calibrate_comms';
import type { KindCount, LeftOutReason } from './calibrate_reasons';

/** One collective with everything the model needs (calibrate_resolve.ts fills what the trace lacks). */
export interface CollectiveSample {
  readonly rank: number;
  readonly name: string;
  readonly kind: CalibKind;
  /** Process group name as the profiler records it ('0', 'dp', ...; 'default' when it records none). */
  readonly group: string;
  readonly groupSize: number;
  /** S of the ring model: gathered output (all-gather) or full input (reduce-scatter, all-reduce), bytes. */
  readonly bytes: number;
  readonly durUs: number;
}

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

/** A group the model could not be fitted to, or kernels left out, and why (src/words/ words it). */
export interface Unfitted {
  readonly group: string;
  readonly groupSize?: number;
  /** The collectives' kinds with counts, in the order first met (all_reduce × 8, all_gather × 4). */
  readonly kinds: readonly KindCount[];
  readonly samples: number;
  readonly reason: LeftOutReason;
}

type ModelInput = Pick<CollectiveSample, 'kind' | 'groupSize' | 'bytes'>;

/** The model's two regressors: T = α·a + (1/β)·b, b in bytes·(µs/s) so that b / β is µs. */
function regressors(s: ModelInput): [number, number] {
  const k = s.kind === 'all_reduce' ? 2 : 1;
  const n = s.groupSize;
  return [k * (n - 1), k * ((n - 1) / n) * s.bytes * 1e6];
}

/** The model's time of a collective under (α, β), µs. */
export function modelUs(s: ModelInput, alphaUs: number, betaBytesPerS: number): number {
  const [a, b] = regressors(s);
  return alphaUs * a + b / betaBytesPerS;
}

/** Each kind of the samples with its count, in the order first met. */
function kindCounts(samples: readonly { readonly kind: string }[]): KindCount[] {
  const m = new Map<string, number>();
  for (const s of samples) m.set(s.kind, (m.get(s.kind) ?? 0) + 1);
  return [...m].map(([kind, count]) => ({ kind, count }));
}

/** Least squares of the relative error over (α, 1/β), or α fixed at 0 (`noAlpha`). */
interface Solution {
  readonly alpha: number;
  readonly invBeta: number;
  /** The normal equations' determinant over its diagonal product: ~0 when sizes barely differ. */
  readonly det: number;
}

function solve(samples: readonly CollectiveSample[], noAlpha: boolean): Solution {
  let saa = 0;
  let sab = 0;
  let sbb = 0;
  let sa = 0;
  let sb = 0;
  for (const s of samples) {
    // each equation over its measured time: a 10 µs all-gather weighs as much as a 10 ms one
    const [a0, b0] = regressors(s);
    const a = a0 / s.durUs;
    const b = b0 / s.durUs;
    saa += a * a;
    sab += a * b;
    sbb += b * b;
    sa += a;
    sb += b;
  }
  if (noAlpha) return { alpha: 0, invBeta: sb / sbb, det: sbb };
  const det = saa * sbb - sab * sab;
  return { alpha: (sa * sbb - sb * sab) / det, invBeta: (saa * sb - sab * sa) / det, det: det / (saa * sbb) };
}

/** Why the durations give no bandwidth: the smallest and the largest collective's sizes and times. */
function noGrowth(samples: readonly CollectiveSample[]): LeftOutReason {
  let lo = samples[0];
  let hi = samples[0];
  for (const s of samples) {
    if (s.bytes < lo.bytes || (s.bytes === lo.bytes && s.durUs < lo.durUs)) lo = s;
    if (s.bytes > hi.bytes || (s.bytes === hi.bytes && s.durUs < hi.durUs)) hi = s;
  }
  return { code: 'no_growth', lo: { bytes: lo.bytes, durUs: lo.durUs }, hi: { bytes: hi.bytes, durUs: hi.durUs } };
}

function distinctSizes(samples: readonly CollectiveSample[]): number {
  const sizes = new Set<number>();
  for (const s of samples) sizes.add(s.bytes);
  return sizes.size;
}

/** α and β of one group, or the reason why they cannot be had. */
function fitGroup(group: string, samples: readonly CollectiveSample[]): GroupFit | Unfitted {
  const n = samples[0].groupSize;
  const base = { group, groupSize: n, kinds: kindCounts(samples), samples: samples.length };
  if (distinctSizes(samples) < 2)
    return { ...base, reason: { code: 'one_size', samples: samples.length, bytes: samples[0].bytes } };
  let f = solve(samples, false);
  if (!(Math.abs(f.det) > 1e-12)) return { ...base, reason: { code: 'singular' } };
  if (f.alpha < 0) f = solve(samples, true); // a latency below zero is none: the best fit with α = 0
  if (!(f.invBeta > 0)) return { ...base, reason: noGrowth(samples) };
  const betaBytesPerS = 1 / f.invBeta;
  const points: FitPoint[] = samples.map((s) => ({
    name: s.name,
    kind: s.kind,
    bytes: s.bytes,
    measuredUs: s.durUs,
    estimatedUs: modelUs(s, f.alpha, betaBytesPerS),
  }));
  let sq = 0;
  let max = 0;
  for (const p of points) {
    const rel = Math.abs(p.estimatedUs - p.measuredUs) / p.measuredUs;
    sq += rel * rel;
    max = Math.max(max, rel);
  }
  return {
    group,
    groupSize: n,
    samples: samples.length,
    alphaUs: f.alpha,
    betaBytesPerS,
    rmsRelErr: Math.sqrt(sq / points.length),
    maxRelErr: max,
    points,
  };
}

/** α and β per process group and group size (a name reused at another size is another ring). */
export function fitCollectives(samples: readonly CollectiveSample[]): { groups: GroupFit[]; unfitted: Unfitted[] } {
  const byGroup = new Map<string, CollectiveSample[]>();
  for (const s of samples) {
    const key = `${s.group}\u0000${s.groupSize}`;
    const list = byGroup.get(key);
    if (list) list.push(s);
    else byGroup.set(key, [s]);
  }
  const groups: GroupFit[] = [];
  const unfitted: Unfitted[] = [];
  for (const list of byGroup.values()) {
    const f = fitGroup(list[0].group, list);
    if ('reason' in f) unfitted.push(f);
    else groups.push(f);
  }
  const order = (x: { group: string; groupSize?: number }, y: { group: string; groupSize?: number }) =>
    x.group.localeCompare(y.group) || (x.groupSize ?? 0) - (y.groupSize ?? 0);
  return { groups: groups.sort(order), unfitted: unfitted.sort(order) };
}
