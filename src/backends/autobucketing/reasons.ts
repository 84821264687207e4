// The autobucketing decisions as reasons: one scheduling reason per original collective
// (prefetched / why not) and one bucketing reason (bucketed / why not), as codes and the facts
// behind them; src/words/ words them with torch's knob names.

import type { PrefetchRefusalDetail, Reason } from '../schedule_types';
import type { BucketResult, BucketWhy } from './torch_bucketer';
import { NodeClass, type TorchGraph } from './torch_graph';
import { OFF_PATH, type OverlapResult, type PrefetchRefusal } from './torch_scheduler';

/** An FX name as the user wrote it (the joined import renames backward nodes `<name>.bw`). */
export const fxName = (tg: TorchGraph, t: number): string => tg.name[t].replace(/\.bw$/, '');

function refusalDetail(tg: TorchGraph, sched: OverlapResult, r: PrefetchRefusal): PrefetchRefusalDetail {
  switch (r.code) {
    case 'not_prefetched_compute_distance':
      return { code: r.code, computeNodesAhead: r.computeNodesAhead };
    case 'not_prefetched_in_flight_budget':
      return { code: r.code, bytes: r.bytes, limitBytes: r.limitBytes };
    case 'not_prefetched_memory_budget':
      return { code: r.code, bytes: r.bytes, limitBytes: r.limitBytes, originalPeakBytes: sched.originalPeakBytes };
    case 'not_prefetched_depends_on_compute': {
      const p = r.blocker;
      if (p === r.overlap) return { code: r.code, blocker: null, wait: false };
      return { code: r.code, blocker: fxName(tg, p), wait: tg.cls[p] === NodeClass.Wait };
    }
  }
}

export function scheduleReasons(sched: OverlapResult): Reason[] {
  const tg = sched.tg;
  return sched.colls.map((info): Reason => {
    const node = tg.name[info.start];
    const coll = tg.ix.nodes[tg.irOf[info.start]].collective!.kind;
    const { estMs, exposedMs } = info;
    if (info.prefetchedBy >= 0) {
      const d = sched.computeDom[info.start];
      const ahead = d === OFF_PATH ? null : d - info.computeAtPrefetch;
      const behind = fxName(tg, info.prefetchedBy);
      return { node, code: 'prefetched', detail: { kind: 'prefetched', coll, behind, ahead, estMs, exposedMs } };
    }
    if (info.reason !== undefined) {
      const refusal = refusalDetail(tg, sched, info.reason);
      const behind = fxName(tg, info.reason.overlap);
      return { node, code: info.reason.code, detail: { kind: 'refused', behind, refusal, estMs, exposedMs } };
    }
    if (info.exposedMs === 0) return { node, code: 'program_order', detail: { kind: 'ready_queue_hidden', coll } };
    if (info.hiding.length === 0) {
      return { node, code: 'not_prefetched_no_compute', detail: { kind: 'no_compute', coll, exposedMs } };
    }
    return { node, code: 'exposed', detail: { kind: 'ready_queue', coll, estMs, exposedMs } };
  });
}

/** The bucketer's refusal to merge a collective, on its node. */
const notBucketed = (tg: TorchGraph, node: string, why: BucketWhy): Reason => ({
  node,
  code: why.code,
  detail: { kind: 'not_bucketed', why: why.detail, seed: fxName(tg, why.seed) },
});

/** `idOf[b]` is the public id of bucket b of `result` (ids follow the final order). */
export function bucketReasons(sched: OverlapResult, result: BucketResult, idOf: readonly number[]): Reason[] {
  const tg = sched.tg;
  const out: Reason[] = [];
  const bucketOf = new Map<number, number>();
  result.buckets.forEach((b, bi) => b.forEach((c) => bucketOf.set(c, bi)));
  for (const info of sched.colls) {
    const node = tg.name[info.start];
    const bi = bucketOf.get(info.start);
    if (bi !== undefined) {
      const members = result.buckets[bi];
      const bytes = members.reduce((s, m) => s + tg.sizeBytes[m], 0);
      const coll = tg.ix.nodes[tg.irOf[info.start]].collective!.kind;
      const detail = { kind: 'bucketed', coll, members: members.length, bucket: idOf[bi], bytes } as const;
      out.push({ node, code: 'bucketed', detail });
      continue;
    }
    const why = result.why.get(info.start);
    if (why !== undefined) out.push(notBucketed(tg, node, why));
  }
  return out;
}
