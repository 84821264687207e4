// Node entry of the live mode: what src/runtime/index.ts exports, plus runTrainingNode, which runs
// the ranks on worker_threads and so imports node: modules the page must never load.
export * from './index';
export { runTrainingNode } from './coordinator_node';
