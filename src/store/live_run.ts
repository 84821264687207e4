// What a live run trains, decided once (docs/ARCHITECTURE.md §3.2): liveRunOptions turns the
// config into the coordinator's options (world size, mesh, kernels, clock, presets, the
// joint-graph knobs: reshard_after_forward, compile.mode, memory_policy). The live
// slice starts the workers with them, and livePlanOf rebuilds from the same options the plan
// those workers ran, so Explain and the memory chart describe that plan, mesh included.
// A browser measures no device memory: the plan's memory curve is the simulator's on the
// preset's cost model, and says so.

import type { BackendName, Schedule } from '../backends';
import type { Mesh, ParallelismConfig, SimConfig } from '../config';
import { MODEL_PRESETS } from '../model';
import { MAX_LIVE_RANKS, liveMesh, planTraining, type TrainingOptions } from '../runtime';
export { RANK_STAGES, startupCounts } from '../runtime';
export type { AdapterProbe, RankStage, RankStartup, ResolvedKernels } from '../runtime';
import { simulate } from '../sim';
import type { MemoryCurve } from '../trace';
import { lruMemo } from '../util';
import type { SideResult } from './store_types';

/** Everything a live run is started with but its progress callback and abort signal. */
type LiveRunOptions = Omit<TrainingOptions, 'onProgress' | 'onStartup' | 'signal'>;

/** The workers a live run uses: the config's ranks, at most MAX_LIVE_RANKS. */
export function liveRanks(n: number): number {
  return Math.max(1, Math.min(Math.floor(n), MAX_LIVE_RANKS));
}

/** The largest degree ≤ `want` that divides both `ranks` and `limit`. */
function fitDegree(want: number, ranks: number, limit: number): number {
  let d = Math.max(1, Math.min(want, ranks, limit));
  while (ranks % d !== 0 || limit % d !== 0) d--;
  return d;
}

/** The config's TP and HSDP degrees scaled down to what `ranks` live workers and tiny (4 heads) can take. */
export function liveMeshOf(p: Readonly<ParallelismConfig>, ranks: number): Mesh {
  const tp = fitDegree(p.tensor_parallel_degree, ranks, MODEL_PRESETS.tiny.nHeads);
  const dpReplicate = fitDegree(p.data_parallel_replicate_degree, ranks / tp, ranks / tp);
  return liveMesh({ ranks, tp, dpReplicate });
}

/** The options a live run of `backend` for `steps` steps starts the coordinator with. */
export function liveRunOptions(cfg: SimConfig, backend: BackendName, steps: number): LiveRunOptions {
  const ranks = liveRanks(cfg.ranks);
  const mesh = liveMeshOf(cfg.parallelism, ranks);
  return {
    model: 'tiny',
    ranks,
    tp: mesh.tp,
    dpReplicate: mesh.dpReplicate,
    steps,
    backend,
    seed: cfg.seed,
    kernels: cfg.live.kernels,
    collective: cfg.live.collectiveAlgorithm,
    timing: cfg.live.timing,
    hardware: cfg.hardware,
    network: cfg.network,
    // the joint-graph knobs: what the backward gathers again and what the graph recomputes
    reshardAfterForward: cfg.reshardAfterForward,
    compileMode: cfg.compileMode,
    memoryPolicy: cfg.memoryPolicy,
  };
}

interface LivePlanView {
  readonly schedule: Schedule;
  readonly memory: readonly MemoryCurve[]; // rank 0, cost-model clock
}

/** The plans of the last few live configs (a side each, a config edit or two back), by their options' JSON. */
const plans = lruMemo(8, (opts: LiveRunOptions) => JSON.stringify(opts), planOf);

/** The plan `opts` run, on the preset's clock (null when the planner refuses the options). */
function planOf(opts: LiveRunOptions): LivePlanView | null {
  try {
    const plan = planTraining(opts);
    const sim = simulate({ worldSize: opts.ranks, schedules: plan.schedule, cost: plan.cost, emitRanks: [0] });
    return { schedule: plan.schedule, memory: sim.memory };
  } catch {
    return null; // the panels say the plan is unavailable
  }
}

/**
 * The live side's plan: null for other sides, when the config no longer describes the run (its
 * world size differs), or when the plan cannot be rebuilt.
 */
export function livePlanOf(r: SideResult | null | undefined, cfg: SimConfig): LivePlanView | null {
  if (r?.source !== 'live') return null;
  const opts: LiveRunOptions = { ...liveRunOptions(cfg, r.backend as BackendName, 1), timing: 'preset' };
  if (opts.ranks !== r.worldSize) return null;
  return plans(opts);
}
