// Public API of the simulator: scheduleMemoryProfile (static peak memory) and simulate.
export type { CollectiveMismatch, SimOptions, SimResult } from './types';
export { MemoryTracker, baseOf, liveIntervals, persistentBytes, scheduleMemoryProfile } from './memory';
export type { ScheduleMemoryProfile } from './memory';
