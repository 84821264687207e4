// The pipeline: config → step graph → cost models → backend schedule(s) → simulation → metrics.
// Pure (no DOM, workers or clock): the UI runs it on the main thread or in a worker, the CLI in Node.

import {
  epOverlapOn,
  epOverlapOptionsOf,
  fsdpAgRsOverlapOn,
  fsdpDenseRegionOverlapOn,
  stepConfigOf,
  type SimConfig,
} from '../config';
import { ConfigError } from '../errors';
import { epOverlapGraph, reassignFsdpAllGathers, runBackend, sinkReduceScatterWaits } from '../backends';
import type { BackendName, Schedule } from '../backends';
import type { CostModel } from '../estimate';
import { buildStepGraph, collectiveCostBytes } from '../graph';
import type { StepGraph } from '../graph';
import { EMIT_ALL_BELOW, simulate } from '../sim';
import type { SimResult } from '../sim';
import type { TraceMetrics } from '../trace';
import { runCosts, type CostOptions } from './cost';
import { lruMemo, fixed } from '../util';
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

/** 2^53 µs: past it the simulated clock (a double) no longer holds whole µs. */
const MAX_CLOCK_US = 2 ** 53;

/**
 * Refuses a run whose durations could carry the simulated clock past 2^53 µs: every node of one
 * rank's step run back to back (an imported est_ms or the cost model's time), scaled by the most the
 * noise and contention may add, must stay below it. Names the node that takes longest.
 */
function checkClockRange(graph: StepGraph, time: CostModel | readonly CostModel[], cfg: SimConfig): void {
  const cost = isCostList(time) ? time[0] : time;
  const noise = (1 + cfg.jitterPct / 100) * Math.max(1, cfg.straggler.factor) * (1 + (cost.overlapSlowdown ?? 0));
  let total = 0;
  let worst = { us: -1, name: '', what: '' };
  for (const node of graph.nodes) {
    const c = node.collective;
    const bytes = c === undefined ? 0 : collectiveCostBytes(c);
    const us =
      node.estMs !== undefined
        ? node.estMs * 1000
        : c
          ? cost.collectiveUs(c.kind, bytes, c.groupSize, c.dtype, c.groupStride)
          : cost.computeUs(node);
    total += us;
    if (us > worst.us) worst = { us, name: node.name, what: c ? `${c.kind} of ${bytes} bytes` : node.kind };
  }
  if (total * noise < MAX_CLOCK_US) return;
  const from = graph.nodes.find((n) => n.name === worst.name)?.estMs !== undefined ? 'its est_ms' : cost.label;
  throw new ConfigError(
    'cost',
    `the step's durations add up to ${total.toExponential(3)} µs` +
      `${noise > 1 ? ` (up to ×${fixed(noise, 2)} with contention and noise)` : ''}, ` +
      `past the simulated clock's 2^53 µs: node '${worst.name}' (${worst.what}) alone takes ` +
      `${worst.us.toExponential(3)} µs by ${from}; smaller shapes, or a faster --hardware / --bandwidth-gbps`,
  );
}

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
  built: StepGraph,
  cfg: SimConfig,
  backend: BackendName,
  opts: PipelineOptions = {},
): PipelineResult {
  // graph_trainer's passes before bucketing: MoE regions chunked and scheduled for EP overlap (its
  // schedule pass runs after bucketing upstream; the backends keep the compute order it sets), FSDP
  // all-gathers on their own process group
  const chunked = epOverlapOn(cfg, backend) ? epOverlapGraph(built, epOverlapOptionsOf(cfg)) : built;
  const graph = fsdpAgRsOverlapOn(cfg, backend) ? reassignFsdpAllGathers(chunked) : chunked;
  const worldSize = graph.meta.worldSize;
  const costs = runCosts(cfg, graph, worldSize, opts);
  checkClockRange(graph, costs.time, cfg);
  const options = backendOptions(cfg, backend);
  // and after it: FSDP reduce-scatter waits sunk to the end of the backward
  const dense = fsdpDenseRegionOverlapOn(cfg, backend);
  const plan1 = (c: CostModel) => {
    const s = runBackend(backend, graph, c, options);
    return dense ? sinkReduceScatterWaits(s) : s;
  };
  let schedule: Schedule;
  let schedules: Schedule[] | undefined;
  const plan = costs.plan;
  if (isCostList(plan)) {
    // alignment off: each rank plans with its own estimates and may choose differently
    schedules = plan.map(plan1);
    schedule = schedules[0];
  } else {
    schedule = plan1(plan);
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
