// Schedule executor: runs one step of a schedule on one rank (kernels + SAB collectives).
export { executeStep } from './executor';
export type { StepContext, StepResult } from './executor';
export type { ExecComm, GroupComms } from './collectives';
export { planGraph, elemTypeOf, elemsOf } from './plan';
export type { ExecPlan, NodeAction } from './plan';
export { PHASES, PhaseClock, formatPhases, phaseReport, sumPhases } from './phases';
export type { Phase, PhaseInterval, StepPhases } from './phases';
export { timedKernels } from './timed_kernels';
