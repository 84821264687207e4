// aot_eager_autobucketing: torch 2.11's schedule_overlap_bucketing (overlap scheduler, then the
// overlap-preserving bucketer) as one pure function (graph, cost, options) → Schedule.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py
// and overlap_preserving_bucketer.py (PR #163960 and follow-ups); SimpleFSDP's backend in
// torchtitan (torchtitan/experiments/simple_fsdp/backend.py) runs it on the joint graph.

import type { CostModel } from '../../estimate/types';
import type { StepGraph } from '../../graph/types';
import { indexGraph } from '../graph_index';
import { resolveOptions } from '../options';
import { nodeItems, rewriteGraph, type BucketPlan, type OrderItem } from '../rewrite';
import type { Backend, Schedule } from '../types';
import { bucketCollectives } from './bucketer';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type AutobucketingOptions } from './options';
import { bucketReasons, scheduleReasons } from './reasons';
import { scheduleOverlap } from './scheduler';

export { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type AutobucketingOptions } from './options';
export { OFF_PATH, computeDomination, type Domination } from './domination';

export function runAutobucketing(graph: StepGraph, cost: CostModel, options?: Partial<AutobucketingOptions>): Schedule {
  const opts = resolveOptions('aot_eager_autobucketing', AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, options);
  const ix = indexGraph(graph);
  const sched = scheduleOverlap(ix, cost, opts);
  const reasons = scheduleReasons(ix, sched);
  if (!opts.collective_bucketing) {
    const { graph: out } = rewriteGraph(ix, nodeItems(sched.order), []);
    return { backend: 'aot_eager_autobucketing', graph: out, buckets: [], reasons, options: { ...opts } };
  }
  const outcome = bucketCollectives(ix, sched, opts);
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
    } else if (bw !== undefined) {
      items.push({ type: 'bucket_wait', bucket: idOf[bw] });
    } else items.push({ type: 'node', index: rep });
  }
  const plans: BucketPlan[] = outcome.buckets.map((members, b) => ({
    id: idOf[b],
    members: members.map((c) => sched.colls[c].start),
  }));
  plans.sort((a, b) => a.id - b.id);
  const { graph: out, buckets } = rewriteGraph(ix, items, plans);
  reasons.push(...bucketReasons(ix, sched, outcome, idOf));
  return { backend: 'aot_eager_autobucketing', graph: out, buckets, reasons, options: { ...opts } };
}

export const autobucketing: Backend<AutobucketingOptions> = { name: 'aot_eager_autobucketing', run: runAutobucketing };
