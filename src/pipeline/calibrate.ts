// Calibration from a real run: fit, per process group, the α (latency per ring step) and β
// (bus bandwidth) of the simulator's ring model to the measured collectives of Kineto traces
// (calibrate_fit.ts), and a time scale per op class (matmul, attention, elementwise) from their
// compute kernels against the simulator's compute for the run's config. PyTorch does the like for
// its own estimates (torch._inductor comm_analysis calibrates from profiles); the model is ours.
// Every collective or group left out is kept with the reason (calibrate_reasons.ts: the field it
// lacks, the sizes that defeat the fit), which src/words/ says in one sentence.

import type { SimConfig } from '../config';
import { ImportError } from '../errors';
import { OP_CLASSES, type OpClass, opClassOfOp } from './calibrate_classes';
import { fitCollectives, type GroupFit, type Unfitted } from './calibrate_fit';
import { LeftOutTally, type TraceSamples } from './calibrate_kineto';
import { resolveCollectives, type SizeAssumption } from './calibrate_resolve';
import { buildGraph, runPipeline } from './run';

export {
  type CollectiveSample,
  type FitPoint,
  fitCollectives,
  type GroupFit,
  modelUs,
  type Unfitted,
} from './calibrate_fit';
export { opClassOfOp };

interface ClassScale {
  readonly cls: OpClass;
  /** Per step and rank: the trace's kernels of the class, and the simulator's compute of the class. */
  readonly measuredUs: number;
  readonly simulatedUs: number;
  /**
   * measured / simulated: what the cost model's times of the class are multiplied by to match the run;
   * 1 (unchanged) for a class the trace has no kernel of.
   */
  readonly scale: number;
  /** The trace has no kernel of the class: nothing measured, the scale left at 1. */
  readonly absent?: true;
}

export interface Calibration {
  readonly groups: readonly GroupFit[];
  /** Groups that could not be fitted and kernels left out, each with the reason (src/words/ words it). */
  readonly unfitted: readonly Unfitted[];
  /** Assumptions the fit made where the trace was silent (a group size from the world; src/words/ words them). */
  readonly notes: readonly SizeAssumption[];
  readonly scales: readonly ClassScale[];
  /** Communication kernels left out of every fit. */
  readonly skipped: number;
  readonly warnings: readonly string[];
}

/** The simulator's compute time per op class on rank 0 for one step of `cfg`, µs. */
function simulatedClassUs(cfg: SimConfig): Record<OpClass, number> {
  const run = runPipeline(cfg, 'aot_eager', { emitRanks: [0] });
  const out: Record<OpClass, number> = { matmul: 0, attention: 0, elementwise: 0 };
  for (const e of run.sim.events) if (e.kind === 'compute') out[opClassOfOp(e.op ?? '')] += e.dur;
  return out;
}

/** Scales per op class: the trace's kernel time per step and rank over the simulator's. */
function fitScales(
  t: Pick<TraceSamples, 'classUs' | 'steps' | 'ranks'>,
  simulated: Record<OpClass, number>,
): ClassScale[] {
  return OP_CLASSES.map((cls) => {
    const measuredUs = t.classUs[cls] / (t.steps * Math.max(1, t.ranks));
    const simulatedUs = simulated[cls];
    // no kernel of the class is no measurement, not a measured 0: the class keeps its times
    if (t.classUs[cls] === 0) return { cls, measuredUs, simulatedUs, scale: 1, absent: true };
    return { cls, measuredUs, simulatedUs, scale: simulatedUs > 0 ? measuredUs / simulatedUs : Number.NaN };
  });
}

/** The trace must come from a run of the config's size: its world_size, or else its highest rank. */
function checkWorld(t: TraceSamples, cfg: SimConfig): void {
  if (t.worldSize !== undefined && t.worldSize !== cfg.ranks)
    throw new ImportError(
      'distributedInfo.world_size',
      `the trace's distributedInfo.world_size is ${t.worldSize} but the config has ranks = ${cfg.ranks}: ` +
        `calibrate against the run's config (--ranks ${t.worldSize})`,
    );
  if (t.maxRank >= cfg.ranks)
    throw new ImportError(
      'distributedInfo.rank',
      `the trace holds rank ${t.maxRank} but the config has ranks = ${cfg.ranks} (ranks 0..${cfg.ranks - 1})`,
    );
}

/** Process group name → size in the config's step graph. */
function configGroups(cfg: SimConfig): Map<string, number> {
  const m = new Map<string, number>();
  for (const n of buildGraph(cfg).nodes) if (n.collective) m.set(n.collective.group, n.collective.groupSize);
  return m;
}

/** The whole calibration of a trace against the config of the run it came from. */
export function calibrate(t: TraceSamples, cfg: SimConfig): Calibration {
  checkWorld(t, cfg);
  const left = new LeftOutTally();
  for (const l of t.left) left.add(l.kind, l.group, l.reason, l.count);
  const r = resolveCollectives(t.collectives, configGroups(cfg), t.worldSize, left);
  const fit = fitCollectives(r.samples);
  const leftOut = left.list();
  const unfitted: Unfitted[] = [
    ...fit.unfitted,
    ...leftOut.map((l) => ({
      group: l.group,
      kinds: [{ kind: l.kind, count: l.count }],
      samples: l.count,
      reason: l.reason,
    })),
  ];
  return {
    groups: fit.groups,
    unfitted,
    notes: r.notes,
    scales: fitScales(t, simulatedClassUs(cfg)),
    skipped: leftOut.reduce((s, l) => s + l.count, 0),
    warnings: t.warnings,
  };
}
