// Explain-panel sentences for the autobucketing decisions: one scheduling reason per original
// collective (prefetched / why not) and one bucketing reason (bucketed / why not), in plain
// words with torch's knob names.

import { GIB, MIB, formatDuration, formatPercent, gibText, kibText, mibText } from '../../util';
import type { Reason } from '../schedule_types';
import type { BucketResult, BucketWhy } from './torch_bucketer';
import { NodeClass, type TorchGraph } from './torch_graph';
import { OFF_PATH, type OverlapResult, type PrefetchRefusal } from './torch_scheduler';

/**
 * Bytes in the app's binary units (torch's GB are GiB: gb_to_bytes multiplies by 1024³); a 40 KiB bucket is
 * not '0.0 MB'.
 */
export function fmtGb(bytes: number): string {
  if (bytes >= 0.1 * GIB) return gibText(bytes, bytes >= 10 * GIB ? 1 : 2);
  return bytes >= 0.1 * MIB ? mibText(bytes) : kibText(bytes);
}

/** torch's estimates are ms; the app writes durations from µs. */
const fmtMs = (ms: number) => formatDuration(ms * 1000);

/** An FX name as the user wrote it (the joined import renames backward nodes `<name>.bw`). */
export const fxName = (tg: TorchGraph, t: number): string => tg.name[t].replace(/\.bw$/, '');

function rejectionText(tg: TorchGraph, sched: OverlapResult, r: PrefetchRefusal): string {
  const by = `not prefetched behind ${fxName(tg, r.overlap)}`;
  switch (r.code) {
    case 'not_prefetched_compute_distance':
      return `${by}: needed ${r.computeNodesAhead} compute nodes later, beyond max_compute_pre_fetch.`;
    case 'not_prefetched_in_flight_budget':
      return `${by}: in-flight budget full (${fmtGb(r.bytes)} > max_in_flight_gb ${fmtGb(r.limitBytes)}).`;
    case 'not_prefetched_memory_budget':
      return `${by}: memory would reach ${fmtGb(r.bytes)} > allowed ${fmtGb(r.limitBytes)} (original peak ` +
        `${fmtGb(sched.originalPeakBytes)} + max(max_memory_increase_gb, max_memory_increase_ratio × peak)).`;
    case 'not_prefetched_depends_on_compute': {
      const p = r.blocker;
      if (p === r.overlap) return `${by}: it depends on that node.`;
      const what =
        tg.cls[p] === NodeClass.Wait
          ? `wait ${fxName(tg, p)}, whose collective is not yet hidden`
          : `${fxName(tg, p)}, which had not run yet`;
      return `${by}: it needs ${what}.`;
    }
  }
}

export function scheduleReasons(sched: OverlapResult): Reason[] {
  const tg = sched.tg;
  return sched.colls.map((info): Reason => {
    const node = tg.name[info.start];
    const kind = tg.ix.nodes[tg.irOf[info.start]].collective!.kind;
    const hiddenPct = info.estMs > 0 ? Math.round((100 * (info.estMs - info.exposedMs)) / info.estMs) : 100;
    if (info.prefetchedBy >= 0) {
      const d = sched.computeDom[info.start];
      const ahead =
        d === OFF_PATH ? 'off the compute path' : `${d - info.computeAtPrefetch} compute node(s) before its first use`;
      return {
        node,
        code: 'prefetched',
        text: `${kind} prefetched behind ${fxName(tg, info.prefetchedBy)} (${ahead}); ` +
          `${formatPercent(hiddenPct, 0)} of its ${fmtMs(info.estMs)} hidden.`,
      };
    }
    if (info.reason !== undefined) {
      return {
        node,
        code: info.reason.code,
        text: `${rejectionText(tg, sched, info.reason)} ${formatPercent(hiddenPct, 0)} of it hidden in the end.`,
      };
    }
    if (info.exposedMs === 0) {
      return {
        node,
        code: 'program_order',
        text: `${kind} issued from the ready queue and fully hidden by the work that ran before its wait.`,
      };
    }
    if (info.hiding.length === 0) {
      return {
        node,
        code: 'not_prefetched_no_compute',
        text: `${kind} not prefetched: nothing ran between its start and its wait; ${fmtMs(info.exposedMs)} exposed.`,
      };
    }
    return {
      node,
      code: 'exposed',
      text: `${kind} issued from the ready queue; its wait came after only ${fmtMs(info.estMs - info.exposedMs)} of ` +
        `work, ${fmtMs(info.exposedMs)} of ${fmtMs(info.estMs)} exposed.`,
    };
  });
}

function whyText(tg: TorchGraph, w: BucketWhy): string {
  const head = `not bucketed with ${fxName(tg, w.seed)}`;
  switch (w.detail) {
    case 'hides_other':
      return 'not bucketed: its start or wait hides another collective (torch does not bucket those yet).';
    case 'byte_cap':
      return `${head}: the bucket would exceed max_bucket_memory_gb.`;
    case 'ancestor':
      return `${head}: a dependency links it to a bucket member (one would have to wait for the other).`;
    case 'hiding_not_between':
      return `${head}: the work that hides it would not lie between the merged start and wait.`;
    case 'enclosed':
      return `${head}: the merged collective would force another collective to finish before the work that hides it.`;
    case 'path_starts':
      return `${head}: a dependency path exists between the two starts.`;
    case 'path_waits':
      return `${head}: a dependency path exists between the two waits.`;
  }
}

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
      const kind = tg.ix.nodes[tg.irOf[info.start]].collective!.kind;
      out.push({
        node,
        code: 'bucketed',
        text: `bucketed with ${members.length - 1} other ${kind}(s) into bucket ${idOf[bi]} (${fmtGb(bytes)} in + ` +
          `out); one launch instead of ${members.length}.`,
      });
      continue;
    }
    const why = result.why.get(info.start);
    if (why !== undefined) out.push({ node, code: why.code, text: whyText(tg, why) });
  }
  return out;
}
