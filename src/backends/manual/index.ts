// torch's manual overlap scheduler (manual_overlap_bucketing) and torchtitan's joint-graph
// subclass, ported: a module bucket plan in, buckets and the reordered program out.

export {
  defaultModulePlan,
  planEntryText,
  type ManualBucket,
  type ManualGraph,
  type ManualMode,
  type ManualOptions,
  type ManualResult,
  type OverlapDep,
  type PlanEntry,
} from './manual_graph';
export { manualOverlapSchedule } from './scheduler';
