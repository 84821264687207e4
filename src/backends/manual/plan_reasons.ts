// Why the manual scheduler put each collective where it did, in the terms of the module bucket
// plan (the words are src/words/'s): the plan entry whose bucket it joined, and the overlap
// dependency torch added for its bucket (an all-gather started before the previous entry's wait,
// a reduce-scatter's wait deferred until the next entry's reduce-scatter started).

import type { Reason, ReasonDetail } from '../schedule_types';
import { type ManualBucket, type ManualGraph, type ManualResult, type PlanEntry, planEntryText } from './manual_graph';

/** One reason per member for its bucket, and one for its bucket's overlap dependency. */
export function manualReasons(
  g: ManualGraph,
  r: ManualResult,
  plan: readonly PlanEntry[],
  phase: 'forward' | 'backward' | 'joint',
): Reason[] {
  const out: Reason[] = [];
  const prefetch = prefetchDetails(g, r, plan);
  for (const b of r.buckets) {
    const detail: ReasonDetail = {
      kind: 'block_bucket',
      coll: b.kind,
      members: b.members.length,
      module: planEntryText(plan[b.entry]),
      phase: phase === 'joint' ? (b.backward ? 'backward' : 'forward') : phase,
      entry: b.entry + 1,
      entries: plan.length,
    };
    const moved = prefetch.get(b);
    for (const m of b.members) {
      out.push({ node: g.names[m], code: 'block_bucket', detail });
      if (moved !== undefined) out.push({ node: g.names[m], code: 'block_prefetch', detail: moved });
    }
  }
  return out;
}

/** Each bucket's overlap dependency, as the detail its members' reasons carry. */
function prefetchDetails(g: ManualGraph, r: ManualResult, plan: readonly PlanEntry[]): Map<ManualBucket, ReasonDetail> {
  const byStart = new Map(r.buckets.map((b) => [b.start, b]));
  const byWait = new Map(r.buckets.map((b) => [b.wait, b]));
  const entryOf = (b: ManualBucket) => planEntryText(plan[b.entry]);
  const out = new Map<ManualBucket, ReasonDetail>();
  for (const { target, sources } of r.deps) {
    const waitOf = byWait.get(target);
    for (const s of sources) {
      const src = byStart.get(s);
      if (src?.kind !== 'all_gather') continue;
      out.set(
        src,
        waitOf !== undefined
          ? { kind: 'block_prefetch_all_gather', before: entryOf(waitOf), at: 'wait' }
          : { kind: 'block_prefetch_all_gather', before: g.names[target], at: 'compute' },
      );
    }
    const next = sources.map((s) => byStart.get(s)).find((b) => b !== undefined && b.kind !== 'all_gather');
    if (waitOf !== undefined && next !== undefined) {
      out.set(waitOf, { kind: 'block_prefetch_reduce_scatter', module: entryOf(waitOf), next: entryOf(next) });
    }
  }
  for (const b of r.buckets) {
    if (b.kind === 'all_gather' || out.has(b)) continue;
    out.set(b, { kind: 'block_prefetch_reduce_scatter', module: entryOf(b), next: null });
  }
  return out;
}
