// The pipeline: config → step graph → cost models → backend schedule(s) → simulation → metrics.
// Pure (no DOM, workers or clock): the UI runs it on the main thread or in a worker, the CLI in Node.

import { stepConfigOf, type SimConfig } from '../config';
import { runBackend } from '../backends';
import type { BackendName, Schedule } from '../backends';
import type { CostModel } from '../estimate';
import { buildStepGraph } from '../graph';
import type { StepGraph } from '../graph';
import { EMIT_ALL_BELOW, simulate } from '../sim';
import type { SimResult } from '../sim';
import type { TraceMetrics } from '../trace';
import { runCosts, type CostOptions } from './cost';
import { lruMemo } from '../util';
import { simMetrics } from './symmetric_metrics';

export interface PipelineOptions extends CostOptions {
  /** Ranks whose events the simulator emits (default: the simulator's rule — all below 64 ranks). */
  readonly emitRanks?: readonly number[];
  /**
   * Keep events and memory curves only for the first `shownRanks` of the emitted ranks (what a
   * timeline draws); metrics still cover every emitted rank. Symmetric runs then never build the
   * other ranks' copies at all. Default: keep all.
   */
  readonly shownRanks?: number;
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
export function backendOptions(cfg: SimConfig, backend: BackendName): Record<string, number | boolean | string> {
  return backend === 'aot_eager_autobucketing' ? { ...cfg.autobucketing } : {};
}

/** The step graph of a config (SimpleFSDP on cfg.ranks ranks, the config's activation checkpointing). */
export function buildGraph(cfg: SimConfig): StepGraph {
  return buildStepGraph(stepConfigOf(cfg));
}

// The last graph compareBackends built, by its step config: the app re-simulates on every edit
// and most edits (network, jitter, knobs, backends) leave the graph as it was. Graphs are
// immutable, and indexGraph caches per graph object, so a reused graph also skips re-indexing.
const lastGraph = lruMemo(1, (cfg: SimConfig) => JSON.stringify(stepConfigOf(cfg)), buildGraph);

function graphOf(cfg: SimConfig): StepGraph {
  return lastGraph(cfg);
}

/**
 * Run one backend on a given graph (built from the config, or imported from an FX dump). The world
 * size is the graph's own (an imported graph's collectives are sized for it), not cfg.ranks.
 */
export function runPipelineOnGraph(
  graph: StepGraph,
  cfg: SimConfig,
  backend: BackendName,
  opts: PipelineOptions = {},
): PipelineResult {
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
  const symmetric = !isCostList(plan) && !isCostList(costs.time);
  const emitted = opts.emitRanks ?? defaultEmitRanks(worldSize);
  const shown =
    opts.shownRanks === undefined
      ? undefined
      : [...new Set(emitted)].sort((a, b) => a - b).slice(0, Math.max(1, opts.shownRanks));
  let sim = simulate({
    worldSize,
    schedules: schedules ?? schedule,
    cost: costs.time,
    // symmetric: emit only the shown ranks; the metrics replicate one rank over all emitted ones
    ...(shown && symmetric ? { emitRanks: shown } : opts.emitRanks ? { emitRanks: opts.emitRanks } : {}),
  });
  const metrics =
    shown && symmetric
      ? simMetrics(
          sim,
          [...new Set(emitted)].sort((a, b) => a - b),
        )
      : simMetrics(sim);
  if (shown && !symmetric) sim = keepRanks(sim, shown);
  return {
    backend,
    graph,
    schedule,
    ...(schedules ? { schedules } : {}),
    sim,
    metrics,
    costLabel: costs.label,
  };
}

/** The simulator's default emitted ranks: all below EMIT_ALL_BELOW, else rank 0. */
function defaultEmitRanks(worldSize: number): number[] {
  return worldSize < EMIT_ALL_BELOW ? Array.from({ length: worldSize }, (_, r) => r) : [0];
}

/** The simulation with events and memory curves of `ranks` only. */
function keepRanks(sim: SimResult, ranks: readonly number[]): SimResult {
  const keep = new Set(ranks);
  return {
    ...sim,
    events: sim.events.filter((e) => keep.has(e.rank)),
    memory: sim.memory.filter((m) => keep.has(m.rank)),
  };
}

/** Build the config's graph and run one backend on it. */
export function runPipeline(cfg: SimConfig, backend: BackendName, opts: PipelineOptions = {}): PipelineResult {
  return runPipelineOnGraph(buildGraph(cfg), cfg, backend, opts);
}

/** Run cfg.backendA and cfg.backendB on the same graph (built once; reused while its step config is unchanged). */
export function compareBackends(cfg: SimConfig, opts: PipelineOptions = {}): { a: PipelineResult; b: PipelineResult } {
  const graph = graphOf(cfg);
  return {
    a: runPipelineOnGraph(graph, cfg, cfg.backendA, opts),
    b: runPipelineOnGraph(graph, cfg, cfg.backendB, opts),
  };
}
