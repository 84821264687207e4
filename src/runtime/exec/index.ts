// Schedule executor: runs one step of a schedule on one rank (kernels + SAB collectives).
export { executeStep } from './executor';
export type { GroupComms } from './collectives';
export { moeKernelsOf } from './moe_exec';
export { elemsOf } from './plan';
export { PhaseClock, formatPhases, phaseReport } from './phases';
export type { PhaseInterval, StepPhases } from './phases';
export { timedKernels } from './timed_kernels';
