// Public API of the estimate layer: hardware / network presets, compute and collective models,
// makeCostModel, per-rank jitter and cross-rank alignment.
export type { CostModel } from './cost_types';
export { HARDWARE_NAMES, HARDWARE_PRESETS, describeAchieved, getHardware } from './hardware';
export type { AchievedEfficiency, HardwareName, HardwarePreset, TorchGpuType } from './hardware';
export { NETWORK_NAMES, NETWORK_PRESETS, getNetwork } from './network';
export type { NcclAnalyticalNetwork, NetworkName, NetworkPreset, RingNetwork } from './network';
export { achievedFlopsFraction, achievedUs, computeNodeUs, eagerBytes, peakFlops, rooflineUs } from './compute';
export { ncclAnalyticalUs, ncclCollectiveRuntimeUs, ringCollectiveUs, ringNetworkUs } from './collective';
export type { NcclColl } from './collective';
export { makeCostModel } from './cost_model';
export type { CostModelOptions } from './cost_model';
export { jitteredCostModels, noiseFromHash, noiseUnit } from './jitter';
export type { JitterOptions } from './jitter';
export { alignCostModels } from './align';
export { hardwareAssumptions, networkAssumptions } from './preset_sources';
export type { Assumption } from './preset_sources';
