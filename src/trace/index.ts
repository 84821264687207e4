// Public API of the trace layer: event model, HTA-style metrics, Chrome-trace export and import.

export * from './event';
export { union, intersect, totalLength, type Interval } from './intervals';
export {
  aggregateMetrics,
  computeMetrics,
  rankMetrics,
  type RankMetrics,
  type TraceMetrics,
  type CollectiveCounts,
} from './metrics';
export {
  exportChromeTrace,
  exportChromeTraces,
  waitOfGraph,
  ncclKernelName,
  streamTids,
  TRACE_FORMAT,
  MEMORY_COUNTER,
  COMPUTE_TID,
  FIRST_COMM_TID,
  type ChromeEvent,
  type ChromeTrace,
  type TraceInput,
  type ExportOptions,
} from './chrome_export';
export { importTrace, type ImportedTrace } from './import';
export { traceText } from './gzip';
export { COMM_KINDS, COMM_LABELS, isCommKind } from './kinds';
export { TimeScale, type TimeWindow } from './time_scale';
export { COMPUTE_STREAM, commGroupOf, commStream, isCommStream, sideStream, streamOf } from './stream';
