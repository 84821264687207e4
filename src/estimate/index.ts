// Public API of the estimate layer: hardware / network presets, compute and collective models,
// makeCostModel, per-rank jitter and cross-rank alignment.
export type { CostModel } from './cost_types';
export { HARDWARE_NAMES, HARDWARE_PRESETS, describeAchieved } from './hardware';
export type { HardwareName, HardwarePreset } from './hardware';
export { NETWORK_NAMES, NETWORK_PRESETS } from './network';
export type { NetworkName, NetworkPreset, RingNetwork } from './network';
export { rooflineUs } from './compute';
export { ncclAnalyticalUs, ncclCollectiveRuntimeUs, ringCollectiveUs, ringNetworkUs } from './collective';
export { makeCostModel } from './cost_model';
export { jitteredCostModels } from './jitter';
export { alignCostModels } from './align';
export { hardwareAssumptions, networkAssumptions } from './preset_sources';
export type { Assumption } from './preset_sources';
export { minSaturationBytes, nccl213CollectiveMs } from './nccl_2_13';
export type { Nccl213Topology } from './nccl_2_13';
