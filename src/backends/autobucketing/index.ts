// aot_eager_autobucketing: torch 2.11's schedule_overlap_bucketing (overlap scheduler, then the
// overlap-preserving bucketer) as one pure function (graph, cost, options) → Schedule.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py
// and overlap_preserving_bucketer.py (PR #163960 and follow-ups); SimpleFSDP's backend in
// torchtitan (torchtitan/experiments/simple_fsdp/backend.py) runs it on the joint graph.
// Torch's memory checks are estimates; we promise the budget (peak ≤ original peak + max(gb,
// ratio·peak)) by checking the final order and retrying with headroom, then dropping the
// bucketing, then (when nothing fit, e.g. activation checkpointing) the same with every off-path
// node released in program order, then program order with hoisted collective starts (hoist.ts),
// then program order.

import type { CostModel } from '../../estimate/types';
import type { StepGraph } from '../../graph/types';
import { indexGraph, type GraphIndex } from '../graph_index';
import { buildMemoryTables, IncrementalMemory, type MemoryTables } from '../memory_tracker';
import { resolveOptions } from '../options';
import { nodeItems, rewriteGraph, type BucketPlan, type OrderItem } from '../rewrite';
import type { Backend, Reason, Schedule } from '../types';
import { bucketCollectives, type BucketOutcome } from './bucketer';
import { hoistCollectives, type HoistResult } from './hoist';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type AutobucketingOptions } from './options';
import { bucketReasons, fmtGb, scheduleReasons } from './reasons';
import { scheduleOverlap, type ScheduleResult } from './scheduler';

export { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type AutobucketingOptions } from './options';
export { OFF_PATH, computeDomination, type Domination } from './domination';

const MAX_ATTEMPTS = 4;

interface Planned {
  readonly items: OrderItem[];
  readonly plans: BucketPlan[];
  readonly idOf: number[];
}

function planBuckets(sched: ScheduleResult, outcome: BucketOutcome): Planned {
  // public bucket ids follow the final order of the merged starts
  const idOf: number[] = new Array(outcome.buckets.length).fill(-1);
  const items: OrderItem[] = [];
  let nextId = 0;
  for (const rep of outcome.slots) {
    if (rep < 0) continue;
    const bs = outcome.startSetOf.get(rep);
    const bw = outcome.waitSetOf.get(rep);
    if (bs !== undefined) {
      idOf[bs] = nextId++;
      items.push({ type: 'bucket_start', bucket: idOf[bs] });
    } else if (bw !== undefined) items.push({ type: 'bucket_wait', bucket: idOf[bw] });
    else items.push({ type: 'node', index: rep });
  }
  const plans: BucketPlan[] = outcome.buckets.map((members, b) => ({ id: idOf[b], members: members.map((c) => sched.colls[c].start) }));
  plans.sort((a, b) => a.id - b.id);
  return { items, plans, idOf };
}

/** Static peak of an order of items (the same numbers scheduleMemoryProfile gives the rewritten graph). */
function itemsPeak(ix: GraphIndex, tables: MemoryTables, items: readonly OrderItem[], plans: readonly BucketPlan[]): number {
  const mem = new IncrementalMemory(tables);
  for (const it of items) {
    if (it.type === 'node') mem.schedule(it.index);
    else {
      const members = plans[it.bucket].members;
      mem.scheduleMerged(it.type === 'bucket_start' ? members : members.map((m) => ix.waitOfColl[m]));
    }
  }
  return mem.peak;
}

interface Attempt {
  readonly schedule?: Schedule;
  readonly unbucketed?: ScheduleResult; // last schedule that fit before bucketing
  readonly allowed: number;
}

export function runAutobucketing(graph: StepGraph, cost: CostModel, options?: Partial<AutobucketingOptions>): Schedule {
  const opts = resolveOptions('aot_eager_autobucketing', AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, options);
  const ix = indexGraph(graph);
  const tables = buildMemoryTables(ix);
  const done = (items: readonly OrderItem[], plans: readonly BucketPlan[], reasons: Reason[]): Schedule => {
    const { graph: out, buckets } = rewriteGraph(ix, items, plans);
    return { backend: 'aot_eager_autobucketing', graph: out, buckets, reasons, options: { ...opts } };
  };
  const attempt = (offPathInOrder: boolean): Attempt => {
    let headroom = 0;
    let unbucketed: ScheduleResult | undefined;
    let allowed = Infinity;
    for (let k = 0; k < MAX_ATTEMPTS; k++) {
      const sched = scheduleOverlap(ix, cost, opts, tables, headroom, offPathInOrder);
      allowed = sched.allowedPeakBytes;
      if (sched.peakBytes > allowed) {
        // the retry after the off-path change doubles its headroom: its small overshoots
        // (the scheduler's checks miss a few MB) otherwise shrink the steps and never fit
        headroom += sched.peakBytes - allowed + (offPathInOrder ? headroom : 0);
        continue;
      }
      const reasons = scheduleReasons(ix, sched);
      if (!opts.collective_bucketing) return { schedule: done(nodeItems(sched.order), [], reasons), allowed };
      unbucketed = sched;
      const outcome = bucketCollectives(ix, sched, opts);
      const planned = planBuckets(sched, outcome);
      const peak = itemsPeak(ix, tables, planned.items, planned.plans);
      if (peak <= allowed) {
        reasons.push(...bucketReasons(ix, sched, outcome, planned.idOf));
        return { schedule: done(planned.items, planned.plans, reasons), allowed };
      }
      headroom += peak - allowed + (offPathInOrder ? headroom : 0);
    }
    return { unbucketed, allowed };
  };
  let result = attempt(false);
  // nothing fit with torch's off-path rule (activation checkpointing): release every off-path
  // node in program order (only here, so the orders that already fit stay as they were)
  if (result.schedule === undefined && result.unbucketed === undefined) result = attempt(true);
  if (result.schedule !== undefined) return result.schedule;
  const { unbucketed, allowed } = result;
  if (unbucketed !== undefined) {
    const reasons = scheduleReasons(ix, unbucketed);
    for (const info of unbucketed.colls) {
      reasons.push({
        node: ix.nodes[info.start].name,
        code: 'not_bucketed_would_expose',
        text: `not bucketed: every bucketing tried pushed peak memory past the allowed ${fmtGb(allowed)}.`,
      });
    }
    return done(nodeItems(unbucketed.order), [], reasons);
  }
  // nothing fit: program order with hoisted collective starts, within the budget (retrying with
  // headroom for what the estimate missed), else the program order (the original peak by definition)
  const hoisted = hoistWithinBudget(ix, cost, opts, tables, allowed);
  if (hoisted !== undefined) return done(nodeItems(hoisted.order), [], hoistReasons(ix, hoisted, allowed));
  const reasons: Reason[] = [];
  for (let i = 0; i < ix.n; i++) {
    if (ix.waitOfColl[i] < 0) continue;
    reasons.push({
      node: ix.nodes[i].name,
      code: 'not_prefetched_memory_budget',
      text: `left in program order: no reordering kept peak memory within the allowed ${fmtGb(allowed)}.`,
    });
  }
  return done(nodeItems(Int32Array.from({ length: ix.n }, (_, i) => i)), [], reasons);
}

function hoistWithinBudget(
  ix: GraphIndex, cost: CostModel, opts: AutobucketingOptions, tables: MemoryTables, allowed: number,
): HoistResult | undefined {
  if (!Number.isFinite(allowed)) return undefined;
  let budget = allowed;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const h = hoistCollectives(ix, cost, opts, tables, budget);
    if (h.peakBytes <= allowed) return h;
    budget -= h.peakBytes - allowed;
  }
  return undefined;
}

function hoistReasons(ix: GraphIndex, h: HoistResult, allowed: number): Reason[] {
  const reasons: Reason[] = [];
  const why = 'program order kept for every other node: no full reordering fit the allowed';
  for (let c = 0; c < h.starts.length; c++) {
    const node = ix.nodes[h.starts[c]].name;
    const before = h.hoistedBefore[c];
    const exposedMs = (h.exposedUs[c] / 1000).toFixed(2);
    if (before >= 0) {
      reasons.push({ node, code: 'prefetched', text: `prefetched before ${ix.nodes[before].name} (${why} ${fmtGb(allowed)}).` });
    } else if (h.exposedUs[c] === 0) {
      reasons.push({ node, code: 'program_order', text: `issued at its program position: the compute after it hides it (${why} ${fmtGb(allowed)}).` });
    } else {
      const code = h.notHoisted[c] ?? 'exposed';
      reasons.push({ node, code, text: `issued at its program position (${code.replace(/_/g, ' ')}), ~${exposedMs} ms exposed (${why} ${fmtGb(allowed)}).` });
    }
  }
  return reasons;
}

export const autobucketing: Backend<AutobucketingOptions> = { name: 'aot_eager_autobucketing', run: runAutobucketing };
