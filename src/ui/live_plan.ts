// The plan a live run executed, for the panels that need more than its events: the schedule
// (Explain: why each collective was prefetched or bucketed) and a memory curve. planTraining is
// the coordinator's own pure planning step, called with the options the live slice passes it,
// so the schedule is the one the workers ran. A browser measures no device memory, so the curve
// is the simulator's for that plan on the cost model, and says so.

import type { Schedule } from '../backends/types';
import type { SimConfig } from '../config';
import { type RankCount, planTraining } from '../runtime/training_plan';
import { simulate } from '../sim';
import type { SideResult } from '../store';
import type { MemoryCurve } from '../trace/event';

export interface LivePlanView {
  readonly schedule: Schedule;
  readonly memory: readonly MemoryCurve[]; // rank 0, cost-model clock
}

const cache = new Map<string, LivePlanView | null>();

/** The live side's plan (null for other sides, or when the plan cannot be rebuilt). */
export function livePlanOf(r: SideResult | null | undefined, cfg: SimConfig): LivePlanView | null {
  if (r?.source !== 'live') return null;
  const key = [r.backend, r.worldSize, cfg.seed, cfg.hardware, cfg.network, cfg.live.collectiveAlgorithm].join('|');
  if (cache.has(key)) return cache.get(key) ?? null;
  let view: LivePlanView | null = null;
  try {
    const plan = planTraining({
      model: 'tiny', ranks: r.worldSize as RankCount, steps: 1, backend: r.backend as Schedule['backend'], seed: cfg.seed,
      kernels: 'cpu', collective: cfg.live.collectiveAlgorithm, timing: 'preset', hardware: cfg.hardware, network: cfg.network,
    });
    const sim = simulate({ worldSize: r.worldSize, schedules: plan.schedule, cost: plan.cost, emitRanks: [0] });
    view = { schedule: plan.schedule, memory: sim.memory };
  } catch {
    view = null; // an option the planner refuses: the panels say the plan is unavailable
  }
  cache.set(key, view);
  return view;
}
