// Public API of the simulator: simulate (events, memory, step time, mismatch) and
// scheduleMemoryProfile (static peak memory in schedule order, for the autobucketing budget).
export type { CollectiveMismatch, SimOptions, SimResult } from './sim_types';
export { simulate } from './simulate';
export { describeMismatch, mismatchReport, type MismatchReport } from './mismatch';
export {
  MemoryTracker,
  baseOf,
  liveIntervals,
  persistentBytes,
  scheduleMemoryProfile,
  tensorLifetimes,
  waitPositions,
} from './memory';
export type { LiveInterval, ScheduleMemoryProfile } from './memory';
export {
  collectiveBytes,
  collectiveDescriptor,
  commStream,
  COMPUTE_STREAM,
  groupInstance,
  rerankEvent,
} from './streams';
export { fastMemoryCurve, tensorTable, type TensorTable } from './memory_curve';
export { EMIT_ALL_BELOW, copyEventsToRanks, isSymmetric } from './symmetric';
export { exposedCommByGroup } from './group_exposure';
