// Public API of the live mode (browser-safe): run real SimpleFSDP training of the tiny model on
// N rank Web Workers, the schedule executor, seeded init and the synthetic dataset. The Node
// flavour, runTrainingNode, is in ./coordinator_node (not re-exported: it imports node: modules).
// Every run reports where each step went (phases, per rank and step; exec/phases.ts).
export { runTraining } from './coordinator';
export {
  DEFAULT_GLOBAL_BATCH,
  LIVE_DEFAULT_LR,
  defaultGlobalBatch,
  liveMesh,
  planTraining,
  type RankCount,
  type TrainingOptions,
} from './training_plan';
export { LIVE_MODELS, MAX_GLOBAL_BATCH, MAX_LIVE_LR, MAX_LIVE_RANKS, RENAMED_KERNEL_CHOICES } from './live_options';
export type { KernelChoice, LiveModel, TimingMode } from './live_options';
export { formatPhases, phaseReport } from './exec';
export { RANK_STAGES, startupCounts } from './startup';
export type { RankStage, RankStartup, ResolvedKernels } from './startup';
export { probeAdapter } from './gpu/index_probe'; // no shaders: the page probes without loading the kernels
export type { AdapterProbe } from './gpu/index_probe';
export type { CollectiveAlgorithm } from './comm';
