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
export {
  buildGraph,
  diffBackends,
  diffCsv,
  hidesInB,
  networkFor,
  parseVary,
  sweepCsv,
  exposedCommByGroup,
  assumptionText,
  decisionText,
  mismatchOpText,
  mismatchText,
  reasonText,
  unfittedText,
  type Bucket,
  type Reason,
  type ReasonCode,
  type Schedule,
  type StepGraph,
  type BackendDiff,
  type DiffRow,
  type SweepAxis,
  type SweepRow,
} from './core_api';
export { importFxFiles, importTraceFiles } from './engine';
export {
  startCalibration,
  type CalibrateRun,
  type Calibration,
  type FitPoint,
  type GroupFit,
} from './calibrate_job';
