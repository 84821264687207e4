// Public API of the pipeline: config → graph → backends → simulation → metrics.

export {
  runPipeline,
  runPipelineOnGraph,
  compareBackends,
  buildGraph,
  backendOptions,
  type PipelineOptions,
  type PipelineResult,
} from './run';
export { runCosts, baseCostModel, networkFor, type CostOptions, type RunCosts } from './cost';
export { replicateMetrics, simMetrics } from './metrics';
