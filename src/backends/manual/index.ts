// torch's manual overlap scheduler (manual_overlap_bucketing) and torchtitan's joint-graph
// subclass, ported: a module bucket plan in, buckets and the reordered program out.

export {
  defaultModulePlan,
  type ManualGraph,
  type ManualOptions,
  type ManualResult,
} from './manual_graph';
export { manualOverlapSchedule } from './scheduler';
export { blockCount, fsdpParamModuleOrder, manualGraphOf, manualRegions, type ManualRegion } from './from_step_graph';
export { manualReasons } from './plan_reasons';
