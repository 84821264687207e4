// Public API of the live mode (browser-safe): run real SimpleFSDP training of the tiny model on
// N rank Web Workers, the schedule executor, seeded init and the synthetic dataset. The Node
// flavour, runTrainingNode, is in ./coordinator_node (not re-exported: it imports node: modules).
// Every run reports where each step went (phases, per rank and step; exec/phases.ts).
export {
  DEFAULT_COMM_TIMEOUT_MS, DEFAULT_GLOBAL_BATCH, LIVE_DEFAULT_LR, MAX_LIVE_RANKS, TIMING_MODES, RankError,
  defaultGlobalBatch, liveMesh,
  measuredEvents, planTraining, presetEvents, runTraining, runTrainingWith,
} from './coordinator';
export type {
  RankCount, RankPort, SpawnRank, TimingMode, TrainingOptions, TrainingPlan, TrainingProgress, TrainingResult,
} from './coordinator';
export { KERNEL_CHOICES, RENAMED_KERNEL_CHOICES, createRankServer, initRankState, runRank } from './rank';
export type {
  KernelChoice,
  RankHost,
  RankInitMessage,
  RankMessage,
  RankRunConfig,
  RankStartMessage,
  RankStepReport,
} from './rank';
export { PHASES, executeStep, formatPhases, phaseReport, planGraph } from './exec';
export type { ExecComm, ExecPlan, Phase, PhaseInterval, StepContext, StepPhases, StepResult } from './exec';
export { wallEvents } from './wall_events';
export { fnv1aHex, initFullParam, shardOf, splitmix32, unshard } from './init';
export { batchRows, rankBatch, type Batch, type DataConfig } from './data';
export type { DeviceTensor, KernelBackend } from './kernels';
