// Bench: calibrating a large Kineto rank file (issue: the reader overflowed the stack from ~120k
// kernels, and grouping copied each list on every addition, quadratic in collectives). A trace
// built in memory at N and 2N: kernels GEMMs and collectives all-gathers (4 sizes, ring-model
// times) whose sizes are on a record_param_comms around each launch, so the launch join runs in
// full. Timed: reading (traceSamples) + resolving + fitting, median of repeats; the ratio of the
// time at 2N to N is ~2 when linear, ~4 when quadratic. Baseline, in the same run: the old
// copy-on-add grouping (`[...(map.get(k) ?? []), e]`) at n and 2n.

import { fitCollectives } from '../src/pipeline/calibrate';
import { LeftOutTally, traceSamples } from '../src/pipeline/calibrate_kineto';
import { resolveCollectives } from '../src/pipeline/calibrate_resolve';
import { fmt, type Row } from './stats';
import { midpointMedian } from '../src/util';
import { bigKinetoRank } from '../test/helpers/kineto_synth'; // the calibration tests' big trace

const KERNELS = 200_000;
const COLLECTIVES = 100_000;
const REPS = 5;
/** Linear: the 2N/N ratio of a linear pass is ~2 (GC and caches add some); quadratic gives ~4. */
const MAX_RATIO = 2.6;

export interface CalibrateRecord {
  readonly kernels: number;
  readonly collectives: number;
  readonly medianMs: number;
  readonly halfMedianMs: number;
  readonly ratio: number;
  readonly oldRatio: number;
  readonly alphaUs: number;
}

/** Read, resolve and fit one trace; the fitted α (a check that the fit ran). */
function calibrateOnce(json: object): number {
  const t = traceSamples([{ name: 'bench.json', json }]);
  if (!t.ok) throw t.error;
  const r = resolveCollectives(t.value.collectives, new Map(), t.value.worldSize, new LeftOutTally());
  const f = fitCollectives(r.samples);
  if (f.groups.length !== 1) throw new Error(`expected one fitted group, got ${f.groups.length}`);
  return f.groups[0].alphaUs;
}

function medianMs(fn: () => unknown): number {
  fn(); // warm-up
  const xs: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  return midpointMedian(xs);
}

/** The old grouping: each addition copies the group's list. */
function oldGrouping(n: number): number {
  const m = new Map<string, number[]>();
  for (let i = 0; i < n; i++) m.set('0|8', [...(m.get('0|8') ?? []), i]);
  return m.get('0|8')!.length;
}

export function benchCalibrate(): { rows: Row[]; records: CalibrateRecord[] } {
  const half = bigKinetoRank(KERNELS / 2, COLLECTIVES / 2);
  const full = bigKinetoRank(KERNELS, COLLECTIVES);
  const halfMs = medianMs(() => calibrateOnce(half));
  const fullMs = medianMs(() => calibrateOnce(full));
  const oldRatio = medianMs(() => oldGrouping(4000)) / medianMs(() => oldGrouping(2000));
  const rec: CalibrateRecord = {
    kernels: KERNELS,
    collectives: COLLECTIVES,
    medianMs: fullMs,
    halfMedianMs: halfMs,
    ratio: fullMs / halfMs,
    oldRatio,
    alphaUs: calibrateOnce(full),
  };
  const row: Row = {
    section: 'calibrate',
    case: `read + fit ${KERNELS / 1e3}k kernels, ${COLLECTIVES / 1e3}k collectives (record_param_comms each)`,
    value: `${fmt(fullMs, 0)} ms (N/2: ${fmt(halfMs, 0)} ms; median of ${REPS}); α ${fmt(rec.alphaUs, 3)} µs`,
    baseline: `old copy-on-add grouping, 4k vs 2k: ×${fmt(oldRatio, 2)}`,
    ratio: `×${fmt(rec.ratio, 2)} time at 2N vs N`,
    target: `linear: ratio < ${MAX_RATIO}`,
    met: rec.ratio < MAX_RATIO,
  };
  return { rows: [row], records: [rec] };
}
