// Public API of the pipeline: config → graph → backends → simulation → metrics.

export {
  runPipeline,
  runPipelineOnGraph,
  compareBackends,
  buildGraph,
  backendOptions,
  type PipelineOptions,
  type PipelineResult,
} from './run';
export { runCosts, baseCostModel, networkFor, type CostOptions, type RunCosts } from './cost';
export { replicateMetrics, simMetrics } from './symmetric_metrics';
export {
  calibrate,
  unfittedSentence,
  type Calibration,
  type ClassScale,
  type FitPoint,
  type GroupFit,
  type Unfitted,
} from './calibrate';
export { traceSamples, type TraceSamples } from './calibrate_kineto';
export { diffBackends, diffCsv, hidesInB, type BackendDiff, type DiffRow } from './diff';
export { parseVary, sweepCsv, type SweepAxis, type SweepRow } from './sweep';
