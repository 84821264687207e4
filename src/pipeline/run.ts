// The pipeline: config → step graph → cost models → backend schedule(s) → simulation → metrics.
// Pure (no DOM, workers or clock): the UI runs it on the main thread or in a worker, the CLI in Node.

import type { SimConfig } from '../config';
import { runBackend } from '../backends';
import type { BackendName, Schedule } from '../backends/types';
import type { CostModel } from '../estimate/types';
import { buildStepGraph } from '../graph';
import type { StepGraph } from '../graph/types';
import { simulate } from '../sim';
import type { SimResult } from '../sim/types';
import { computeMetrics, type TraceMetrics } from '../trace/metrics';
import { runCosts, type CostOptions } from './cost';

export interface PipelineOptions extends CostOptions {
  /** Ranks whose events the simulator emits (default: the simulator's rule — all below 64 ranks). */
  readonly emitRanks?: readonly number[];
}

export interface PipelineResult {
  readonly backend: BackendName;
  /** The step graph the backend ran on (program order). */
  readonly graph: StepGraph;
  /** The schedule (rank 0's when ranks planned separately). */
  readonly schedule: Schedule;
  /** One schedule per rank when alignment is off and ranks see different estimates; else absent. */
  readonly schedules?: readonly Schedule[];
  readonly sim: SimResult;
  readonly metrics: TraceMetrics;
  /** The cost model that timed the run, for UI and trace labels. */
  readonly costLabel: string;
}

const isCostList = (c: CostModel | readonly CostModel[]): c is readonly CostModel[] => Array.isArray(c);

/** Backend options from the config: only autobucketing has knobs. */
export function backendOptions(cfg: SimConfig, backend: BackendName): Record<string, number | boolean> {
  return backend === 'aot_eager_autobucketing' ? { ...cfg.autobucketing } : {};
}

/** The step graph of a config (SimpleFSDP on cfg.ranks ranks). */
export function buildGraph(cfg: SimConfig): StepGraph {
  return buildStepGraph({
    model: cfg.model,
    worldSize: cfg.ranks,
    ...(cfg.localBatch !== null ? { batch: cfg.localBatch } : {}),
    ...(cfg.seqLen !== null ? { seqLen: cfg.seqLen } : {}),
    paramDtype: cfg.paramDtype,
    reduceDtype: cfg.reduceDtype,
  });
}

/**
 * Run one backend on a given graph (built from the config, or imported from an FX dump). The world
 * size is the graph's own (an imported graph's collectives are sized for it), not cfg.ranks.
 */
export function runPipelineOnGraph(graph: StepGraph, cfg: SimConfig, backend: BackendName, opts: PipelineOptions = {}): PipelineResult {
  const worldSize = graph.meta.worldSize;
  const costs = runCosts(cfg, graph, worldSize, opts);
  const options = backendOptions(cfg, backend);
  let schedule: Schedule;
  let schedules: Schedule[] | undefined;
  const plan = costs.plan;
  if (isCostList(plan)) {
    // alignment off: each rank plans with its own estimates and may choose differently
    schedules = plan.map((c) => runBackend(backend, graph, c, options));
    schedule = schedules[0];
  } else {
    schedule = runBackend(backend, graph, plan, options);
  }
  const sim = simulate({
    worldSize,
    schedules: schedules ?? schedule,
    cost: costs.time,
    ...(opts.emitRanks ? { emitRanks: opts.emitRanks } : {}),
  });
  return {
    backend,
    graph,
    schedule,
    ...(schedules ? { schedules } : {}),
    sim,
    metrics: computeMetrics(sim.events, sim.memory),
    costLabel: costs.label,
  };
}

/** Build the config's graph and run one backend on it. */
export function runPipeline(cfg: SimConfig, backend: BackendName, opts: PipelineOptions = {}): PipelineResult {
  return runPipelineOnGraph(buildGraph(cfg), cfg, backend, opts);
}

/** Run cfg.backendA and cfg.backendB on the same graph (built once). */
export function compareBackends(cfg: SimConfig, opts: PipelineOptions = {}): { a: PipelineResult; b: PipelineResult } {
  const graph = buildGraph(cfg);
  return { a: runPipelineOnGraph(graph, cfg, cfg.backendA, opts), b: runPipelineOnGraph(graph, cfg, cfg.backendB, opts) };
}
