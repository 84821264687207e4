// aot_eager_autobucketing: torch's schedule_overlap_bucketing (the overlap scheduler, then the
// overlap-preserving bucketer) as one pure function (graph, cost, options) → Schedule. It runs,
// as torch does, once per FX graph: each imported graph, or the forward and the backward of a
// built step (SimpleFSDP compiles them as two graphs). Torch's memory budget is an estimate it
// checks before each prefetch, not a promise; the port keeps that (passStats says by how much a
// graph overshoots).
// Upstream: https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_inductor/fx_passes/overlap_scheduling.py
// and overlap_preserving_bucketer.py; torchtitan/experiments/simple_fsdp/backend.py calls it.

import type { CostModel, Nccl213Topology } from '../../estimate';
import { GraphError, kahnOrder } from '../../graph';
import type { Edge, StepGraph } from '../../graph';
import { indexGraph } from '../graph_index';
import { resolveOptions } from '../knob_specs';
import { rewriteGraph, type BucketPlan, type OrderItem } from '../rewrite';
import type { Backend, PassStats, Reason, Schedule } from '../schedule_types';
import { simpleOverlapGraph } from '../simple_overlap_graph';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type AutobucketingOptions, profileOf } from './options';
import type { GraphIndex } from '../graph_index';
import { fxNameOf } from './fx_names';
import { type PreBucket, preBucketFsdp, type PreBucketResult } from './pre_bucket';
import { bucketReasons, fxName, scheduleReasons } from './reasons';
import { bucketCollectives, type BucketResult } from './torch_bucketer';
import { NodeClass, buildTorchGraph, passRegions, type TorchGraph } from './torch_graph';
import { scheduleOverlap, type OverlapResult } from './torch_scheduler';

export {
  AUTOBUCKETING_DEFAULTS,
  AUTOBUCKETING_KNOBS,
  AUTOBUCKETING_PROFILES,
  DEFAULT_TORCH_PROFILE,
  torchProfileLabel,
  type AutobucketingOptions,
} from './options';
export {
  compareWithTorch,
  matchLogGraphs,
  logMismatches,
  parseTorchPassLog,
  type Agreement,
  type Decision,
  type LogMismatch,
  type TorchLogGraph,
} from './torch_log';

/** One graph's pass: its schedule, its buckets (none when collective_bucketing is off). */
interface RegionPass {
  readonly sched: OverlapResult | null; // null: a graph without collectives, left as it is
  readonly phase?: string;
  readonly result: BucketResult;
  readonly items: OrderItem[]; // bucket ids local to the region until numbered
}

export function runAutobucketing(graph: StepGraph, cost: CostModel, options?: Partial<AutobucketingOptions>): Schedule {
  const opts = resolveOptions('aot_eager_autobucketing', AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, options);
  const pre = opts.pre_bucketing_fsdp_collectives ? preBucketFsdp(graph, opts, topologyOf(opts)) : null;
  const ix = indexGraph(pre?.graph ?? graph);
  const passes: RegionPass[] = [];
  const items: OrderItem[] = [];
  const plans: BucketPlan[] = [];
  const localBase: number[] = [];
  for (const region of passRegions(ix)) {
    const tg = buildTorchGraph(ix, cost, region);
    if (tg.collectives.length === 0) {
      // torch returns a graph without collectives untouched
      passes.push({ sched: null, result: NO_BUCKETS, items: region.nodes.map((index) => ({ type: 'node', index })) });
      localBase.push(plans.length);
      continue;
    }
    const sched = scheduleOverlap(tg, opts);
    const result = opts.collective_bucketing ? bucketCollectives(sched, opts) : NO_BUCKETS;
    localBase.push(plans.length);
    const pos = new Int32Array(tg.n);
    sched.order.forEach((t, p) => (pos[t] = p));
    for (const members of result.buckets) {
      const issueOrder = [...members].sort((a, b) => pos[a] - pos[b]);
      plans.push({ id: plans.length, members: issueOrder.map((t) => tg.irOf[t]) });
    }
    passes.push({ sched, result, items: finalOrder(tg, sched, result), phase: region.phase });
  }
  // public bucket ids follow the final order of the merged starts
  const idOf = new Int32Array(plans.length).fill(-1);
  let next = 0;
  passes.forEach((p, r) => {
    for (const it of p.items) {
      if (it.type === 'node') items.push(it);
      else {
        const g = localBase[r] + it.bucket;
        if (it.type === 'bucket_start') idOf[g] = next++;
        items.push({ type: it.type, bucket: idOf[g] });
      }
    }
  });
  const renumbered = plans.map((p) => ({ id: idOf[p.id], members: p.members })).sort((a, b) => a.id - b.id);
  const mapped = pre ? onOriginalGraph(indexGraph(graph), ix, pre, items, renumbered) : null;
  const { graph: out, buckets } = mapped
    ? rewriteGraph(mapped.ix, mapped.items, mapped.plans)
    : rewriteGraph(ix, items, renumbered);
  const publicId = (g: number) => (mapped ? mapped.idOf[idOf[g]] : idOf[g]);
  const reasons: Reason[] = [];
  const stats: PassStats[] = [];
  passes.forEach((p, r) => {
    if (p.sched === null) return;
    reasons.push(...scheduleReasons(p.sched));
    reasons.push(
      ...bucketReasons(
        p.sched,
        p.result,
        p.result.buckets.map((_, b) => publicId(localBase[r] + b)),
      ),
    );
    stats.push(passStats(p.phase ?? '', p.sched, p.result, pre));
  });
  return {
    backend: 'aot_eager_autobucketing',
    graph: opts.simple_overlap ? simpleOverlapGraph(out) : out,
    buckets,
    reasons: pre ? reasonsOnOriginals(reasons, pre) : reasons,
    options: { ...opts },
    passStats: stats,
    torchProfile: profileOf(opts),
  };
}

/**
 * A reason names an original collective: one about a merged collective of the pre-bucketed graph
 * holds for each collective it carries, after the merge itself.
 */
function reasonsOnOriginals(reasons: readonly Reason[], pre: PreBucketResult): Reason[] {
  const byStart = new Map(pre.buckets.map((b) => [b.start, b]));
  const merged = new Set<string>();
  return reasons.flatMap((r) => {
    const b = byStart.get(r.node);
    if (b === undefined) return [r];
    const first = !merged.has(b.start);
    merged.add(b.start);
    const detail = { kind: 'pre_bucketed', members: b.members.length, merged: fxNameOf(b.start) } as const;
    return b.members.flatMap((node): Reason[] => [
      ...(first ? [{ node, code: 'bucketed' as const, detail }] : []),
      { ...r, node },
    ]);
  });
}

/** What torch detects about the machine, from the knobs that stand for it. */
const topologyOf = (o: AutobucketingOptions): Nccl213Topology => ({
  gpuType: o.nccl_gpu_type,
  gpusPerNode: o.nccl_gpus_per_node,
  nvlink: true,
});

/** How many of the graph's nodes carry their own (torch's) estimate, of all call nodes. */
function estimateSources(tg: TorchGraph): PassStats['estimates'] {
  let fromGraph = 0;
  let total = 0;
  for (let t = 0; t < tg.n; t++) {
    if (tg.irOf[t] < 0) continue;
    total++;
    if (tg.ix.nodes[tg.irOf[t]].estMs !== undefined) fromGraph++;
  }
  return { fromGraph, total };
}

const NO_BUCKETS: BucketResult = { buckets: [], slots: [], extraDeps: new Map(), why: new Map() };

function passStats(phase: string, sched: OverlapResult, result: BucketResult, pre: PreBucketResult | null): PassStats {
  const tg = sched.tg;
  // FX names are user strings: a record without a prototype takes `__proto__` as a name
  const overlapping = Object.create(null) as Record<string, string[]>;
  for (const c of sched.colls) if (c.prefetchedBy >= 0) overlapping[fxName(tg, c.start)] = [fxName(tg, c.prefetchedBy)];
  const merged = result.buckets.reduce((s, b) => s + b.length - 1, 0);
  // this graph's merges: by membership, not by node phase (a graph of several phases is passed whole)
  const inGraph = new Set(tg.irOf);
  const mine = pre?.buckets.filter((b) => inGraph.has(tg.ix.indexOfName.get(b.start) ?? -1)) ?? [];
  const byStart = new Map(mine.map((b) => [b.start, b]));
  const expand = (t: number): string[] => {
    const b = byStart.get(tg.ix.nodes[tg.irOf[t]].name);
    return b ? b.members.map(fxNameOf) : [fxName(tg, t)];
  };
  const inBucket = new Set(result.buckets.flat().map((t) => tg.ix.nodes[tg.irOf[t]].name));
  const preMerged = mine.reduce((s, b) => s + b.members.length - 1, 0);
  const cap = pre?.caps.find((c) => c.phase === phase);
  const originals = (b: PreBucket) => b.members.map(fxNameOf);
  return {
    phase,
    collectives: sched.colls.map((c) => fxName(tg, c.start)),
    collectivesBefore: sched.colls.length + preMerged,
    collectivesAfter: sched.colls.length - merged,
    potentialExposedMs: sched.potentialExposedMs,
    scheduledExposedMs: sched.totalExposedMs,
    originalPeakBytes: sched.originalPeakBytes,
    allowedPeakBytes: sched.allowedPeakBytes,
    peakBytes: sched.peakBytes,
    overlapping,
    buckets: [
      ...result.buckets.map((b) => b.flatMap(expand)),
      ...mine.filter((b) => !inBucket.has(b.start)).map(originals),
    ],
    estimates: estimateSources(tg),
    ...(cap && pre
      ? {
          preBucketing: {
            capMb: cap.capMb,
            buckets: mine.map(originals),
            merged: mine.map((b) => fxNameOf(b.start)),
            estimator: pre.estimator,
          },
        }
      : {}),
  };
}

/**
 * Decisions made on the pre-bucketed graph, on the original one: a merged collective becomes a
 * bucket of the collectives it carries (a bucketer bucket of merged ones, the union), the casts
 * torch folded into its copy-in run just before it, and the copy-in / copy-out nodes go (the
 * bucket convention of the output graph stands for them).
 */
function onOriginalGraph(
  oix: GraphIndex,
  pix: GraphIndex,
  pre: PreBucketResult,
  items: readonly OrderItem[],
  plans: readonly BucketPlan[],
): { ix: GraphIndex; items: OrderItem[]; plans: BucketPlan[]; idOf: number[] } {
  const orig = oix.indexOfName; // name → position in oix.nodes
  const byStart = new Map(pre.buckets.map((b) => [b.start, b]));
  const byWait = new Map(pre.buckets.flatMap((b) => b.waits.map((w) => [w, b] as const)));
  const waited = new Set<string>();
  const expand = (name: string): readonly string[] => byStart.get(name)?.members ?? [name];
  const folded = (names: readonly string[]): OrderItem[] =>
    names.flatMap((n) => byStart.get(n)?.folded ?? []).map((f) => ({ type: 'node', index: orig.get(f)! }));
  const out: OrderItem[] = [];
  const newPlans: BucketPlan[] = [];
  const idOf: number[] = [];
  const idOfPre = new Map<string, number>();
  const open = (members: readonly string[]): number => {
    newPlans.push({ id: newPlans.length, members: members.flatMap(expand).map((m) => orig.get(m)!) });
    return newPlans.length - 1;
  };
  for (const it of items) {
    if (it.type !== 'node') {
      const names = plans[it.bucket].members.map((m) => pix.nodes[m].name);
      if (it.type === 'bucket_start') {
        out.push(...folded(names));
        idOf[it.bucket] = open(names);
      }
      out.push({ type: it.type, bucket: idOf[it.bucket] });
      continue;
    }
    const name = pix.nodes[it.index].name;
    if (pre.helpers.has(name)) continue;
    const b = byStart.get(name);
    const w = byWait.get(name);
    if (b) {
      out.push(...folded([name]));
      idOfPre.set(name, open([name]));
      out.push({ type: 'bucket_start', bucket: idOfPre.get(name)! });
    } else if (w) {
      // a coalesced collective (a wait per member) completes at the first of its waits
      if (!waited.has(w.start)) out.push({ type: 'bucket_wait', bucket: idOfPre.get(w.start)! });
      waited.add(w.start);
    } else out.push({ type: 'node', index: orig.get(name)! });
  }
  return { ix: oix, items: out, plans: newPlans, idOf };
}

/**
 * The region's final order: the scheduled order with each bucket's starts and waits merged into
 * the timeline slots the bucketer chose, kept topological over data and the bucketer's extra
 * dependencies (torch re-sorts its graph the same way after bucketing).
 */
function finalOrder(tg: TorchGraph, sched: OverlapResult, result: BucketResult): OrderItem[] {
  const pos = new Int32Array(tg.n).fill(-1);
  sched.order.forEach((t, p) => (pos[t] = p));
  // units: one per node, one per bucket's starts and one per bucket's waits
  const unit = new Int32Array(tg.n).fill(-1);
  const unitItem: OrderItem[] = [];
  const unitPos: number[] = [];
  const newUnit = (item: OrderItem, p: number) => {
    unitItem.push(item);
    unitPos.push(p);
    return unitItem.length - 1;
  };
  result.buckets.forEach((members, b) => {
    const s = newUnit({ type: 'bucket_start', bucket: b }, pos[result.slots[b].start]);
    const w = newUnit({ type: 'bucket_wait', bucket: b }, pos[result.slots[b].wait]);
    for (const m of members) {
      unit[m] = s;
      unit[tg.waitOf[m]] = w;
    }
  });
  for (const t of sched.order) {
    const cls = tg.cls[t];
    if (cls === NodeClass.Placeholder || cls === NodeClass.Output || unit[t] >= 0) continue;
    unit[t] = newUnit({ type: 'node', index: tg.irOf[t] }, pos[t]);
  }
  const edges: Pick<Edge, 'from' | 'to'>[] = [];
  for (let t = 0; t < tg.n; t++) {
    if (unit[t] < 0) continue;
    for (let k = tg.parOff[t]; k < tg.parOff[t + 1]; k++) {
      const p = tg.parIdx[k];
      if (unit[p] >= 0 && unit[p] !== unit[t]) edges.push({ from: unit[p], to: unit[t] });
    }
  }
  const withExtra = [...edges];
  for (const [n, deps] of result.extraDeps) {
    if (unit[n] < 0) continue;
    for (const d of deps) if (unit[d] >= 0 && unit[n] !== unit[d]) withExtra.push({ from: unit[d], to: unit[n] });
  }
  const order = kahn(unitPos, withExtra) ?? kahn(unitPos, edges);
  if (order === null) throw new Error('aot_eager_autobucketing: the bucketed graph has a dependency cycle');
  return order.map((u) => unitItem[u]);
}

/** A topological order of the units, ready units by priority; null on a cycle. */
function kahn(priority: readonly number[], edges: readonly Pick<Edge, 'from' | 'to'>[]): number[] | null {
  try {
    return kahnOrder(priority.length, edges, (u) => [priority[u], u]);
  } catch (e) {
    if (e instanceof GraphError) return null;
    throw e;
  }
}

export const autobucketing: Backend<AutobucketingOptions> = { name: 'aot_eager_autobucketing', run: runAutobucketing };
