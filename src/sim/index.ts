// Public API of the simulator: simulate (events, memory, step time, mismatch) and
// scheduleMemoryProfile (static peak memory in schedule order, for the autobucketing budget).
export type { CollectiveMismatch, SimResult } from './sim_types';
export { simulate } from './simulate';
export { mismatchReport, type MismatchReport } from './mismatch';
export {
  groupInstance,
  rerankEvent,
} from './streams';
export { EMIT_ALL_BELOW } from './symmetric';
export { exposedCommByGroup } from './group_exposure';
export { allocatorPeaks } from './allocator';
