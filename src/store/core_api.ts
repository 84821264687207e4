// What the UI needs from the core layers, re-exported: ui/ imports the store and never the graph,
// backends, sim or pipeline (docs/ARCHITECTURE.md §2). The schedule's types the panels and the
// timeline name, the pure helpers the diff table, the sweep panel, the metrics table and the
// preset info compute with on a run the store already holds, and the words (src/words/) for the
// engine's structured values, which take those types.

export type { Bucket, Reason, ReasonCode, Schedule } from '../backends';
export type { StepGraph } from '../graph';
export {
  buildGraph,
  diffBackends,
  diffCsv,
  hidesInB,
  networkFor,
  parseVary,
  sweepCsv,
  type BackendDiff,
  type DiffRow,
  type SweepAxis,
  type SweepRow,
} from '../pipeline';
export { exposedCommByGroup } from '../sim';
export { assumptionText, decisionText, mismatchOpText, mismatchText, reasonText, unfittedText } from '../words';
