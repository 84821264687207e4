// Public entry of the stores.
export { appStore, createAppStore, type AppState, type AppStore } from './app_store';
export { sideWindow, type ThemeChoice } from './view_slice';
export { liveMeshOf, livePlanOf, liveRanks, liveRunOptions, RANK_STAGES, startupCounts } from './live_run';
export type { AdapterProbe, RankStage, RankStartup, ResolvedKernels } from './live_run';
export { startUrlSync, readUrlState, applyUrlState } from './url_sync';
export * from './store_types';
export * from './core_api';
export { importFxFiles, importTraceFiles } from './engine';
export {
  startCalibration,
  type CalibrateRun,
  type Calibration,
  type FitPoint,
  type GroupFit,
} from './calibrate_job';
