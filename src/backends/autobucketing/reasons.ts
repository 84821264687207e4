// Explain-panel sentences for the autobucketing decisions: one scheduling reason per original
// collective (prefetched / why not) and one bucketing reason (bucketed / why not).

import type { GraphIndex } from '../graph_index';
import type { Reason } from '../types';
import type { BucketOutcome, BucketWhy } from './bucketer';
import type { CollState, ScheduleResult } from './scheduler';

/** Bytes as GB (torch's GB are GiB: gb_to_bytes multiplies by 1024³). */
export function fmtGb(bytes: number): string {
  const gb = bytes / 1024 ** 3;
  return gb >= 10 ? `${gb.toFixed(1)} GB` : gb >= 0.1 ? `${gb.toFixed(2)} GB` : `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

const fmtUs = (u: number) => (u >= 1000 ? `${(u / 1000).toFixed(2)} ms` : `${u.toFixed(1)} µs`);

function rejectionText(ix: GraphIndex, sched: ScheduleResult, r: NonNullable<CollState['reason']>): string {
  const by = `not prefetched behind ${ix.nodes[r.overlap].name}`;
  switch (r.code) {
    case 'not_prefetched_coll_distance':
      return `${by}: more than max_coll_distance unscheduled collectives were ahead of it.`;
    case 'not_prefetched_compute_distance':
      return `${by}: needed ${r.a} compute nodes later, beyond max_compute_pre_fetch.`;
    case 'not_prefetched_in_flight_budget':
      return `${by}: in-flight budget full (${fmtGb(r.a)} > max_in_flight_gb ${fmtGb(r.b)}).`;
    case 'not_prefetched_memory_budget':
      return `${by}: memory would reach ${fmtGb(r.a)} > allowed ${fmtGb(r.b)} (original peak ${fmtGb(sched.originalPeakBytes)} + max(max_memory_increase_gb, max_memory_increase_ratio × peak)).`;
    default: {
      const p = ix.nodes[r.a];
      const what = p.kind === 'wait' ? `wait ${p.name}, whose collective is not yet hidden` : `${p.kind === 'compute' ? 'compute node' : p.kind} ${p.name}`;
      return `${by}: it needs ${what}, which had not run yet.`;
    }
  }
}

export function scheduleReasons(ix: GraphIndex, sched: ScheduleResult): Reason[] {
  const out: Reason[] = [];
  for (const info of sched.colls) {
    const node = ix.nodes[info.start];
    const kind = node.collective!.kind;
    const hiddenPct = info.estUs > 0 ? Math.round((100 * (info.estUs - info.exposedUs)) / info.estUs) : 100;
    if (info.prefetchedBy >= 0) {
      const by = ix.nodes[info.prefetchedBy].name;
      const d = sched.dom.computeDom[info.start];
      const ahead = d === 0x7fffffff ? 'off the compute path' : `${d - info.computeAtPrefetch} compute node(s) before its first use`;
      out.push({
        node: node.name,
        code: 'prefetched',
        text: `${kind} prefetched behind ${by} (${ahead}); ${hiddenPct}% of its ${fmtUs(info.estUs)} hidden.`,
      });
    } else if (info.reason !== undefined) {
      out.push({ node: node.name, code: info.reason.code, text: `${rejectionText(ix, sched, info.reason)} ${hiddenPct}% of it hidden in the end.` });
    } else if (info.exposedUs === 0) {
      out.push({
        node: node.name,
        code: 'program_order',
        text: `${kind} issued from the ready queue and fully hidden by the compute that ran before its wait.`,
      });
    } else if (info.hiding.length === 0) {
      out.push({
        node: node.name,
        code: 'not_prefetched_no_compute',
        text: `${kind} not prefetched: no compute node ran between its start and its wait; ${fmtUs(info.exposedUs)} exposed.`,
      });
    } else {
      out.push({
        node: node.name,
        code: 'exposed',
        text: `${kind} issued from the ready queue; its wait came after only ${fmtUs(info.estUs - info.exposedUs)} of compute, ${fmtUs(info.exposedUs)} of ${fmtUs(info.estUs)} exposed.`,
      });
    }
  }
  return out;
}

/** `idOf[b]` is the public id of outcome bucket b (ids follow the final order). */
function whyText(ix: GraphIndex, sched: ScheduleResult, w: BucketWhy): string {
  const name = (c: number) => ix.nodes[sched.colls[c].start].name;
  const head = `not bucketed with ${name(w.seed)}`;
  switch (w.detail) {
    case 'nyi_hiding':
      return 'not bucketed: its start or wait hides another collective (not yet supported in torch either).';
    case 'byte_cap':
      return `${head}: the bucket would exceed max_bucket_memory_gb.`;
    case 'ancestor':
      return `${head}: a dependency path links it to bucket member ${name(w.other)}.`;
    case 'hiding':
      return `${head}: its hiding compute ${ix.nodes[w.other].name} would not lie between the merged start and wait.`;
    case 'enclosed':
      return `${head}: the merged collective would force another collective to finish before the compute that hides it.`;
    case 'path_starts':
      return `${head}: a dependency path exists between the two starts.`;
    case 'path_waits':
      return `${head}: a dependency path exists between the two waits.`;
  }
}

export function bucketReasons(ix: GraphIndex, sched: ScheduleResult, outcome: BucketOutcome, idOf: readonly number[]): Reason[] {
  const out: Reason[] = [];
  const bucketOf = new Map<number, number>();
  outcome.buckets.forEach((b, bi) => b.forEach((c) => bucketOf.set(c, bi)));
  sched.colls.forEach((info, c) => {
    const node = ix.nodes[info.start];
    const bi = bucketOf.get(c);
    if (bi !== undefined) {
      const members = outcome.buckets[bi];
      const bytes = members.reduce((s, m) => s + sched.colls[m].sizeBytes, 0);
      out.push({
        node: node.name,
        code: 'bucketed',
        text: `bucketed with ${members.length - 1} other ${node.collective!.kind}(s) into bucket ${idOf[bi]} (${fmtGb(bytes)} in + out); one launch instead of ${members.length}.`,
      });
      return;
    }
    const why = outcome.why.get(c);
    if (why !== undefined) out.push({ node: node.name, code: why.code, text: whyText(ix, sched, why) });
  });
  return out;
}
