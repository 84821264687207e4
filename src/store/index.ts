// Public entry of the stores.
export { appStore, type AppState, type AppStore } from './app_store';
export { sideWindow, type ThemeChoice } from './view_slice';
export { livePlanOf, RANK_STAGES, startupCounts } from './live_run';
export type { AdapterProbe, RankStage, RankStartup, ResolvedKernels } from './live_run';
export { startUrlSync, readUrlState, applyUrlState } from './url_sync';
export {
  LIVE_MEASURED_CLOCK,
  type Side,
  type SideResult,
  type Selection,
  type LiveState,
  type Notice,
} from './store_types';
// What the UI needs from the core layers: ui/ imports the store and never the graph, backends, sim
// or pipeline (docs/ARCHITECTURE.md §2). The schedule's types the panels and the timeline name, the
// pure helpers the diff table, the sweep panel, the metrics table and the preset info compute with
// on a run the store already holds, and the words (src/words/) for the engine's structured values.
export type { Bucket, Reason, ReasonCode, Schedule } from '../backends';
export { DTYPE_BYTES, type StepGraph } from '../graph';
export {
  buildGraph,
  diffBackends,
  diffCsv,
  hidesInB,
  networkFor,
  parseVary,
  sweepCsv,
  type BackendDiff,
  type DiffRow,
  type SweepAxis,
  type SweepRow,
} from '../pipeline';
export { exposedCommByGroup } from '../sim';
export { assumptionText, decisionText, mismatchOpText, mismatchText, reasonText, unfittedText } from '../words';
export { importFxFiles, importTraceFiles } from './engine';
export {
  startCalibration,
  type CalibrateRun,
  type Calibration,
  type FitPoint,
  type GroupFit,
} from './calibrate_job';
