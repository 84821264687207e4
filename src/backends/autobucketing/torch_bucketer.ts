// Overlap-preserving bucketer: a decision-by-decision port of torch 2.13's
// OverlapPreservingBucketer and its AugmentedGraphHelper, quirks included (extra dependencies
// are sets; a failed placement's undo re-adds the node → next edge only when the event has no
// predecessor, so that edge is gone for good).
// Upstream: https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_inductor/fx_passes/overlap_preserving_bucketer.py
// and torch/_inductor/augmented_graph_helper.py.
//
// Per process group, collectives with the same key (all-gather: group + dtype; reduce-scatter:
// group + op + dtype) merge greedily up to max_bucket_memory_gb, least-hidden first when
// bucket_exposed_first. A candidate joins when no static dependency links it to a member, and one
// of four placements of the merged start and wait keeps every hiding node between them, encloses
// no other collective's hiding interval on the group's timeline, and makes no cycle.

import type { ReasonCode } from '../schedule_types';
import type { AutobucketingOptions } from './options';
import { gbToBytes } from './options';
import { TargetReach, withExtraParents } from './reach';
import { NodeClass, type TorchGraph } from './torch_graph';
import type { CollInfo, OverlapResult } from './torch_scheduler';

/** Why a collective was not added to a bucket: the seed it was tried with and, where known, the blocking node. */
export interface BucketWhy {
  code: ReasonCode;
  detail: 'hides_other' | 'byte_cap' | 'ancestor' | 'hiding_not_between' | 'enclosed' | 'path_starts' | 'path_waits';
  seed: number; // torch node of the bucket's first collective
}

export interface BucketResult {
  /** Buckets as torch forms them: the seed first, then members in the order they joined. */
  readonly buckets: readonly (readonly number[])[];
  /** Per bucket: the timeline slots its merged start and merged wait took (original start / wait nodes). */
  readonly slots: readonly { readonly start: number; readonly wait: number }[];
  /** Extra dependencies left in the augmented graph (node → nodes it must follow), for the final order. */
  readonly extraDeps: ReadonlyMap<number, ReadonlySet<number>>;
  readonly why: ReadonlyMap<number, BucketWhy>;
}

/**
 * torch's greedy cut-off (max_consecutive_failures), which it also uses as the position window of exposed-first
 * candidates.
 */
const MAX_CONSECUTIVE_FAILURES = 20;

interface PgEvent {
  readonly node: number;
  readonly type: 'compute' | 'start' | 'wait';
  readonly position: number;
  prev: PgEvent | null;
  next: PgEvent | null;
}

function unlink(e: PgEvent): [PgEvent | null, PgEvent | null] {
  const { prev, next } = e;
  if (prev) prev.next = next;
  if (next) next.prev = prev;
  e.prev = null;
  e.next = null;
  return [prev, next];
}

function insertBetween(e: PgEvent, prev: PgEvent | null, next: PgEvent | null): void {
  if (prev) prev.next = e;
  e.prev = prev;
  if (next) next.prev = e;
  e.next = next;
}

/**
 * torch AugmentedGraphHelper: graph edges + extra edges (sets), nodes merged into sets. Every
 * edge, graph or extra, points forward in the scheduled order; only a merged set links positions
 * backwards. has_path therefore searches backward from the target only down to the lowest
 * position the source can reach: its own lowest member, lowered through every merged set that
 * spans that bound (exact, and a window of a few nodes where torch walks the whole graph).
 */
class AugmentedGraph {
  private readonly mergeSet: (number[] | undefined)[];
  readonly extraDeps = new Map<number, Set<number>>();
  private readonly extraUses = new Map<number, Set<number>>();
  /** Sets with more than one member (the only links to earlier positions), with their position span. */
  private readonly merged = new Map<number[], { min: number; max: number }>();
  private readonly seen: Int32Array;
  private stamp = 0;

  constructor(
    private readonly tg: TorchGraph,
    private readonly pos: Int32Array,
  ) {
    this.mergeSet = new Array(tg.n);
    this.seen = new Int32Array(tg.n);
  }

  private setOf(x: number): number[] {
    return (this.mergeSet[x] ??= [x]);
  }

  addExtraDep(n: number, dep: number): void {
    let d = this.extraDeps.get(n);
    if (!d) this.extraDeps.set(n, (d = new Set()));
    d.add(dep);
    let u = this.extraUses.get(dep);
    if (!u) this.extraUses.set(dep, (u = new Set()));
    u.add(n);
  }

  removeExtraDep(n: number, dep: number): void {
    const d = this.extraDeps.get(n);
    if (d?.has(dep)) {
      d.delete(dep);
      this.extraUses.get(dep)?.delete(n);
    }
  }

  mergeToSet(existing: number, added: number): void {
    const set = this.setOf(existing);
    for (const x of this.setOf(added)) {
      if (!set.includes(x)) set.push(x);
      this.mergeSet[x] = set;
    }
    if (set.length > 1) this.merged.set(set, this.span(set));
  }

  private span(set: readonly number[]): { min: number; max: number } {
    let min = Infinity;
    let max = -Infinity;
    for (const m of set) {
      min = Math.min(min, this.pos[m]);
      max = Math.max(max, this.pos[m]);
    }
    return { min, max };
  }

  unmergeNode(x: number): void {
    const set = this.setOf(x);
    if (set.length === 1) return;
    set.splice(set.indexOf(x), 1);
    if (set.length === 1) this.merged.delete(set);
    else this.merged.set(set, this.span(set));
    this.mergeSet[x] = [x];
  }

  /** Lowest position reachable from `set`: its lowest member, lowered through merged sets spanning the bound. */
  private lowerBound(set: readonly number[]): number {
    let lo = Infinity;
    for (const m of set) lo = Math.min(lo, this.pos[m]);
    for (let changed = true; changed; ) {
      changed = false;
      for (const { min, max } of this.merged.values()) {
        if (max > lo && min < lo) {
          lo = min;
          changed = true;
        }
      }
    }
    return lo;
  }

  /** Is there a path source → … → target (through graph edges, extra edges and merged sets)? */
  hasPath(source: number, target: number): boolean {
    const tg = this.tg;
    const sourceSet = this.setOf(source);
    const lo = this.lowerBound(sourceSet);
    const stamp = ++this.stamp;
    const seen = this.seen;
    seen[target] = stamp;
    const queue = [target];
    const visit = (dep: number): boolean => {
      if (sourceSet.includes(dep)) return true;
      if (seen[dep] === stamp || this.pos[dep] < lo) return false;
      seen[dep] = stamp;
      queue.push(dep);
      return false;
    };
    while (queue.length > 0) {
      const cur = queue.pop()!;
      for (const m of this.setOf(cur)) {
        for (let k = tg.parOff[m]; k < tg.parOff[m + 1]; k++) if (visit(tg.parIdx[k])) return true;
        const extra = this.extraDeps.get(m);
        if (extra) for (const dep of extra) if (visit(dep)) return true;
      }
    }
    return false;
  }
}

export function bucketCollectives(sched: OverlapResult, opts: AutobucketingOptions): BucketResult {
  return new OverlapPreservingBucketer(sched, opts).run();
}

class OverlapPreservingBucketer {
  private readonly tg: TorchGraph;
  private readonly pos: Int32Array; // scheduled position of each torch node
  private readonly reach: TargetReach;
  private readonly aug: AugmentedGraph;
  private readonly allHiding = new Set<number>();
  private readonly heads = new Map<string, PgEvent | null>();
  private readonly nodeToEvent = new Map<number, PgEvent>();
  private readonly why = new Map<number, BucketWhy>();
  private readonly internodePgs = new Set<string>();
  private readonly infoAt: (CollInfo | undefined)[]; // collective start → its info
  private readonly checked = new Set<string>();
  private readonly slots: { start: number; wait: number }[] = [];
  private placement = { start: -1, wait: -1 };

  constructor(
    private readonly sched: OverlapResult,
    private readonly opts: AutobucketingOptions,
  ) {
    const tg = (this.tg = sched.tg);
    this.infoAt = new Array(tg.n);
    for (const info of sched.colls) this.infoAt[info.start] = info;
    this.pos = new Int32Array(tg.n).fill(-1);
    sched.order.forEach((t, p) => (this.pos[t] = p));
    // static ancestors: graph edges plus start → hiding node → wait for every hidden collective
    const extraInputs = new Map<number, number[]>();
    const addInput = (to: number, from: number) => {
      const l = extraInputs.get(to);
      if (!l) extraInputs.set(to, [from]);
      else if (!l.includes(from)) l.push(from);
    };
    for (const info of sched.colls) {
      if (info.exposedMs !== 0) continue;
      for (const hn of info.hiding) {
        addInput(hn, info.start);
        addInput(info.wait, hn);
      }
    }
    const targets: number[] = [];
    for (const info of sched.colls) targets.push(info.start, info.wait);
    this.reach = new TargetReach(
      { n: tg.n, order: Int32Array.from(sched.order), ...withExtraParents(tg.n, tg.parOff, tg.parIdx, extraInputs) },
      targets,
    );
    this.aug = new AugmentedGraph(tg, this.pos);
    for (const pg of this.pgs()) this.heads.set(pg, this.buildTimeline(pg));
    for (const info of sched.colls) {
      if (info.exposedMs !== 0) continue;
      for (const hn of info.hiding) {
        this.aug.addExtraDep(hn, info.start);
        this.aug.addExtraDep(info.wait, hn);
      }
      for (const hn of info.hiding) this.allHiding.add(hn);
    }
    for (const info of sched.colls) {
      if (tg.ix.nodes[tg.irOf[info.start]].kind === 'all_gather' && !this.checked.has(tg.group[info.start])) {
        this.checked.add(tg.group[info.start]);
        if (isFsdpAllGather(tg, info.start)) this.internodePgs.add(tg.group[info.start]);
      }
    }
  }

  private pgs(): string[] {
    const out: string[] = [];
    for (const info of this.sched.colls)
      if (!out.includes(this.tg.group[info.start])) out.push(this.tg.group[info.start]);
    return out;
  }

  private info(start: number): CollInfo {
    return this.infoAt[start]!;
  }

  /**
   * The group's ordered starts, waits and hiding compute, chained in the augmented graph (one NCCL stream per group).
   */
  private buildTimeline(pg: string): PgEvent | null {
    const tg = this.tg;
    let head: PgEvent | null = null;
    let prev: PgEvent | null = null;
    let position = 0;
    const hiding = new Set<number>();
    for (const t of this.sched.order) {
      let type: PgEvent['type'] | null = null;
      const info = this.sched.infoOf.get(t);
      if (info !== undefined && tg.group[t] === pg) {
        type = 'start';
        for (const h of info.hiding) hiding.add(h);
      } else if (tg.cls[t] === NodeClass.Wait) {
        if (tg.group[tg.startOf[t]] === pg) type = 'wait';
        else if (hiding.has(t)) type = 'compute';
      } else if (tg.cls[t] === NodeClass.Compute || hiding.has(t)) type = 'compute';
      if (type === null) continue;
      const event: PgEvent = { node: t, type, position, prev: null, next: null };
      insertBetween(event, prev, null);
      if (prev) this.aug.addExtraDep(event.node, prev.node);
      else head = event;
      prev = event;
      position++;
    }
    return head;
  }

  run(): BucketResult {
    const tg = this.tg;
    const byPg = new Map<string, number[]>();
    for (const info of this.sched.colls) {
      const pg = tg.group[info.start];
      const list = byPg.get(pg);
      if (list) list.push(info.start);
      else byPg.set(pg, [info.start]);
    }
    const buckets: number[][] = [];
    for (const [pg, starts] of byPg) {
      if (this.opts.bucket_only_internode_comms && !this.internodePgs.has(pg)) continue;
      this.nodeToEvent.clear();
      for (let e = this.heads.get(pg) ?? null; e !== null; e = e.next) this.nodeToEvent.set(e.node, e);
      const byKey = new Map<string, number[]>();
      for (const s of starts) {
        if (tg.bucketKey[s] === '') continue; // torch: bucket key None (a coalesced collective) is never bucketed
        const list = byKey.get(tg.fullKey[s]);
        if (list) list.push(s);
        else byKey.set(tg.fullKey[s], [s]);
      }
      for (const group of byKey.values()) buckets.push(...this.findBuckets(group, pg));
    }
    return { buckets, slots: this.slots, extraDeps: this.aug.extraDeps, why: this.why };
  }

  private note(c: number, code: ReasonCode, detail: BucketWhy['detail'], seed: number): void {
    this.why.set(c, { code, detail, seed });
  }

  private overlapRatio(c: number): number {
    const info = this.info(c);
    return info.estMs <= 0 ? 0 : (info.estMs - info.exposedMs) / info.estMs;
  }

  private exposedFirst(pg: string): boolean {
    const mode = this.opts.bucket_exposed_first;
    return mode === 'auto' ? this.internodePgs.has(pg) : mode === 'true';
  }

  private findBuckets(group: readonly number[], pg: string): number[][] {
    const maxBytes = gbToBytes(this.opts.max_bucket_memory_gb);
    const exposedFirst = this.exposedFirst(pg);
    const pos = this.pos;
    const ratio = new Map(group.map((c) => [c, this.overlapRatio(c)]));
    const sorted = exposedFirst
      ? [...group].sort((a, b) => ratio.get(a)! - ratio.get(b)! || pos[a] - pos[b])
      : [...group].sort((a, b) => pos[a] - pos[b]);
    const processed = new Uint8Array(this.tg.n);
    const buckets: number[][] = [];
    for (let i = 0; i < sorted.length; i++) {
      const seed = sorted[i];
      if (processed[seed]) continue;
      if (this.allHiding.has(seed) || this.allHiding.has(this.info(seed).wait)) {
        this.note(seed, 'not_bucketed_would_expose', 'hides_other', seed);
        continue;
      }
      const bucket = [seed];
      this.placement = { start: seed, wait: this.info(seed).wait };
      let total = this.info(seed).sizeBytes;
      processed[seed] = 1;
      let failures = 0;
      const end = Math.min(sorted.length, i + 1 + this.opts.max_coll_distance);
      for (let j = i + 1; j < end; j++) {
        const cand = sorted[j];
        const bytes = this.info(cand).sizeBytes;
        if (total + bytes > maxBytes) {
          if (!processed[cand]) this.note(cand, 'not_bucketed_byte_cap', 'byte_cap', seed);
          break;
        }
        if (processed[cand]) continue;
        if (exposedFirst && Math.abs(pos[cand] - pos[seed]) > MAX_CONSECUTIVE_FAILURES) continue;
        if (this.canAddToBucket(bucket, cand)) {
          bucket.push(cand);
          total += bytes;
          processed[cand] = 1;
          failures = 0;
        } else if (++failures >= MAX_CONSECUTIVE_FAILURES) break;
      }
      if (bucket.length > 1) {
        buckets.push(bucket);
        this.slots.push(this.placement);
      }
    }
    return buckets;
  }

  private hasDep(a: number, b: number): boolean {
    return this.reach.isAncestorOfTarget(a, b) || this.reach.isAncestorOfTarget(b, a);
  }

  private hasAncestorConflicts(bucket: readonly number[], cand: number): boolean {
    const ci = this.info(cand);
    for (const c of bucket) {
      const mi = this.info(c);
      if (this.hasDep(c, cand) || this.hasDep(mi.wait, ci.wait)) return true;
      for (const hn of mi.hiding) if (this.reach.targetIsAncestorOf(ci.wait, hn)) return true;
      for (const hn of ci.hiding) if (this.reach.targetIsAncestorOf(mi.wait, hn)) return true;
    }
    return false;
  }

  private canAddToBucket(bucket: readonly number[], cand: number): boolean {
    const seed = bucket[0];
    const ci = this.info(cand);
    if (this.allHiding.has(cand) || this.allHiding.has(ci.wait)) {
      this.note(cand, 'not_bucketed_would_expose', 'hides_other', seed);
      return false;
    }
    if (this.hasAncestorConflicts(bucket, cand)) {
      this.note(cand, 'not_bucketed_path_between_starts', 'ancestor', seed);
      return false;
    }
    const seedWait = this.info(seed).wait;
    const placements: [number, number][] = [
      [seed, ci.wait], // move the candidate's start early, keep its wait late
      [seed, seedWait],
      [cand, ci.wait],
      [cand, seedWait],
    ];
    for (const [startPos, waitPos] of placements)
      if (this.tryTimelinePosition(bucket, cand, startPos, waitPos)) return true;
    return false;
  }

  private event(x: number): PgEvent {
    const e = this.nodeToEvent.get(x);
    if (e === undefined) throw new Error(`bucketer: ${this.tg.name[x]} is not on its group's timeline`);
    return e;
  }

  private tryTimelinePosition(bucket: readonly number[], cand: number, startPos: number, waitPos: number): boolean {
    const seed = bucket[0];
    if (!this.preservesHidingIntervals(bucket, cand, startPos, waitPos)) return false;
    const startToMove = startPos === seed ? cand : seed;
    const [sPrev, sNext] = this.removeFromEvent(startToMove);
    if (this.aug.hasPath(seed, cand) || this.aug.hasPath(cand, seed)) {
      this.restoreToEvent(startToMove, sPrev, sNext);
      this.note(cand, 'not_bucketed_path_between_starts', 'path_starts', seed);
      return false;
    }
    this.aug.mergeToSet(seed, cand);
    const seedWait = this.info(seed).wait;
    const candWait = this.info(cand).wait;
    const waitToMove = waitPos === seedWait ? candWait : seedWait;
    const [wPrev, wNext] = this.removeFromEvent(waitToMove);
    if (this.aug.hasPath(seedWait, candWait) || this.aug.hasPath(candWait, seedWait)) {
      this.restoreToEvent(waitToMove, wPrev, wNext);
      this.aug.unmergeNode(cand);
      this.restoreToEvent(startToMove, sPrev, sNext);
      this.note(cand, 'not_bucketed_path_between_starts', 'path_waits', seed);
      return false;
    }
    this.aug.mergeToSet(seedWait, candWait);
    const startEvent = this.event(startPos);
    const waitEvent = this.event(waitPos);
    this.nodeToEvent.set(cand, startEvent);
    this.nodeToEvent.set(candWait, waitEvent);
    this.nodeToEvent.set(seed, startEvent);
    this.nodeToEvent.set(seedWait, waitEvent);
    this.placement = { start: startEvent.node, wait: waitEvent.node };
    return true;
  }

  private removeFromEvent(x: number): [PgEvent | null, PgEvent | null] {
    const [prev, next] = unlink(this.event(x));
    if (prev) this.aug.removeExtraDep(x, prev.node);
    if (next) this.aug.removeExtraDep(next.node, x);
    if (prev && next) this.aug.addExtraDep(next.node, prev.node);
    return [prev, next];
  }

  /** torch restore_to_event, quirk kept: the x → next edge comes back only when there is no prev. */
  private restoreToEvent(x: number, prev: PgEvent | null, next: PgEvent | null): void {
    insertBetween(this.event(x), prev, next);
    if (prev) this.aug.addExtraDep(x, prev.node);
    if (next && !prev) this.aug.addExtraDep(next.node, x);
    if (prev && next) this.aug.removeExtraDep(next.node, prev.node);
  }

  /** (execution interval, hiding intervals) of the collective a start or wait event belongs to. */
  private intervals(e: PgEvent): [[number, number] | null, [number, number][]] {
    let coll: number;
    if (e.type === 'start') coll = e.node;
    else if (e.type === 'wait') coll = this.tg.startOf[e.node];
    else return [null, []];
    const info = this.sched.infoOf.get(coll);
    if (info === undefined) return [null, []];
    const s = this.event(coll).position;
    const exec: [number, number] = [s, this.event(info.wait).position];
    return [exec, info.hiding.map((hn): [number, number] => [s, this.event(hn).position])];
  }

  private preservesHidingIntervals(
    bucket: readonly number[],
    cand: number,
    startPos: number,
    waitPos: number,
  ): boolean {
    const colls = [cand, ...bucket];
    const waits = colls.map((c) => this.info(c).wait);
    const hidingPositions: number[] = [];
    for (const c of colls) for (const hn of this.info(c).hiding) hidingPositions.push(this.event(hn).position);
    const newStart = this.event(startPos);
    const newWait = this.event(waitPos);
    for (const p of hidingPositions) {
      if (!(newStart.position < p && p < newWait.position)) {
        this.note(cand, 'not_bucketed_hiding_compute_not_between', 'hiding_not_between', bucket[0]);
        return false;
      }
    }
    const pos = (x: number) => this.event(x).position;
    const seed = bucket[0];
    const latestStart = Math.max(pos(cand), pos(seed));
    const earliestWait = Math.min(pos(this.info(cand).wait), pos(this.info(seed).wait));
    const exec: [number, number][] = [[newStart.position, newWait.position]];
    const hide: [number, number][] = hidingPositions.map((p): [number, number] => [newStart.position, p]);
    const collect = (e: PgEvent) => {
      if (colls.includes(e.node) || waits.includes(e.node)) return;
      const [x, hs] = this.intervals(e);
      if (x) exec.push(x);
      hide.push(...hs);
    };
    for (let e = newStart.next; e !== null && e.position < latestStart; e = e.next) collect(e);
    for (let e = newWait.prev; e !== null && e.position > earliestWait; e = e.prev) collect(e);
    for (const h of hide) {
      for (const x of exec) {
        if (x[0] < h[0] && h[1] < x[1]) {
          this.note(cand, 'not_bucketed_hiding_compute_not_between', 'enclosed', bucket[0]);
          return false;
        }
      }
    }
    return true;
  }
}

/** torch is_fsdp_all_gather: an all-gather whose ancestors hold exactly one placeholder (a parameter). */
function isFsdpAllGather(tg: TorchGraph, start: number): boolean {
  const seen = new Set<number>();
  const stack = [start];
  let placeholders = 0;
  while (stack.length > 0) {
    const x = stack.pop()!;
    for (let k = tg.parOff[x]; k < tg.parOff[x + 1]; k++) {
      const p = tg.parIdx[k];
      if (seen.has(p)) continue;
      seen.add(p);
      if (tg.cls[p] === NodeClass.Placeholder && ++placeholders > 1) return false;
      stack.push(p);
    }
  }
  return placeholders === 1;
}
