// Public API of the pipeline: config → graph → backends → simulation → metrics.

export {
  runPipeline,
  runPipelineOnGraph,
  compareBackends,
  buildGraph,
  type PipelineResult,
} from './run';
export { networkFor } from './cost';
export { calibrate, type Calibration, type FitPoint, type GroupFit, type Unfitted } from './calibrate';
export { TRACE_DTYPE_BYTES } from './calibrate_comms';
export { calibrateKeep, TraceSampleReader } from './calibrate_kineto';
export type { KindCount, LeftOutReason } from './calibrate_reasons';
export type { SizeAssumption } from './calibrate_resolve';
export { diffBackends, diffCsv, hidesInB, type BackendDiff, type DiffRow } from './diff';
export { parseVary, sweepCsv, type SweepAxis, type SweepRow } from './sweep';
export { stepFigures } from './figures';
export { DIFF_COLUMNS, diffInputOf } from './diff';
export { culpritPlan, findCulprit } from './culprit';
export type { Culprit, CulpritPlan } from './culprit';
export { MAX_SWEEP_POINTS, newSweepCache, runSweepPoint, runSweepPoints, sweepPoints, sweepSeconds } from './sweep';
