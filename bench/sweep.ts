// Bench: a 50-point sweep of llama3-8b on 8 ranks (autobucketing.max_in_flight_gb = 0.5…25 GB in
// 0.5 GB steps) under aot_eager and aot_eager_autobucketing, as `fsdp-sim sweep` runs it, in points
// per second. Baseline: the same points run one by one with no sharing (graph built and both
// backends simulated per point, as 50 `fsdp-sim compare` calls would), timed on the first 3 points.
// Target (issue 10: "a 50-point sweep finishes in seconds"): the 50 points in ≤ 10 s (≥ 5 points/s).

import { defaultConfig, type SimConfig } from '../src/config';
import { runPipeline } from '../src/pipeline';
import { stepFigures } from '../src/pipeline/figures';
import { parseVary, runSweep, sweepPoints } from '../src/pipeline/sweep';
import { fmt, type Row } from './stats';

const BACKENDS = ['aot_eager', 'aot_eager_autobucketing'] as const;
const TARGET_PPS = 5;
const BASELINE_POINTS = 3;

export interface SweepRecord {
  readonly points: number;
  readonly rows: number;
  readonly seconds: number;
  readonly pointsPerSec: number;
  readonly baselinePointsPerSec: number;
}

export function benchSweep(): { rows: Row[]; records: SweepRecord } {
  const base: SimConfig = { ...defaultConfig(), model: 'llama3-8b', ranks: 8 };
  const axes = [parseVary('autobucketing.max_in_flight_gb=0.5:25:0.5')];
  const t0 = performance.now();
  const out = runSweep(base, axes, BACKENDS);
  const seconds = (performance.now() - t0) / 1000;
  const points = axes[0].values.length;
  const b0 = performance.now();
  for (const p of sweepPoints(base, axes).slice(0, BASELINE_POINTS))
    for (const b of BACKENDS) stepFigures(runPipeline(p.config, b));
  const baselinePps = BASELINE_POINTS / ((performance.now() - b0) / 1000);
  const pps = points / seconds;
  const records = { points, rows: out.length, seconds, pointsPerSec: pps, baselinePointsPerSec: baselinePps };
  const rows: Row[] = [
    {
      section: 'sweep',
      case: `llama3-8b × 8 ranks, ${points} points × 2 backends (${fmt(seconds, 1)} s)`,
      value: `${fmt(pps, 2)} points/s`,
      baseline: `${fmt(baselinePps, 2)} points/s unshared`,
      ratio: `${fmt(pps / baselinePps, 2)}× faster`,
      target: `≥ ${TARGET_PPS} points/s`,
      met: pps >= TARGET_PPS,
    },
  ];
  return { rows, records };
}
