// Public API of the trace layer: event model, HTA-style metrics, Chrome-trace export and import.

export type { EventKind, StreamName, TraceEvent, MemoryCurve } from './event';
export { union, intersect, totalLength, type Interval } from './intervals';
export {
  aggregateMetrics,
  computeMetrics,
  exposedIntervals,
  rankTimeSets,
  waitSplit,
  type RankMetrics,
  type TraceMetrics,
} from './metrics';
export {
  exportChromeTrace,
  waitOfGraph,
  type ExportOptions,
} from './chrome_export';
export { importTrace, parseTraceFile } from './import';
export { traceText } from './gzip';
export {
  DROPPED,
  importKeep,
  keptBudget,
  MAX_KEPT_EVENTS,
  readTraceStream,
  type Keep,
  type KeptBudget,
} from './trace_stream';
export { COMM_KINDS, COMM_LABELS } from './kinds';
export { TimeScale, type TimeWindow } from './time_scale';
export { COMPUTE_STREAM, commGroupOf, commStream, isCommStream, sideStream, streamOf } from './stream';
export { analyzeTrace } from './analysis';
export type { TraceAnalysis } from './analysis';
export { MAX_TRACE_BYTES } from './gzip';
export { chromeTraceJson } from './chrome_json';
export { htaCategory } from './hta';
export { MAX_TRACE_US, fail, isObject, readInt, readSpan, readString, readTs } from './import_fields';
export type { Json } from './import_fields';
export { checkOneRun, runIdentity } from './import_runs';
export type { RunIdentity } from './import_runs';
export { MAX_RANK, fileRank } from './kineto';
export { clampWindow, panWindow, zoomWindow } from './time_scale';
