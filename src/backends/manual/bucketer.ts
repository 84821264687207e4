// torch's ManualOverlapPreservingBucketer (torch/_inductor/fx_passes/overlap_manual_scheduling.py,
// torch 2.15) on one scope of the module bucket plan: the scope's FSDP collectives grouped by
// full bucket key, each group split into dependency-free buckets (its Mirsky levels), each bucket
// merged where torch puts it: the start right after its latest input (or its first member), the
// wait at its first member's wait unless that precedes the start. torchtitan's joint scheduler packs
// a bucket in FSDP2's parameter order (FSDPParamOrderBucketer); torch's in scope order.

import type { ItemGraph } from './item_graph';
import type { ManualBucket } from './manual_graph';
import { sortIfNeeded } from './stable_sort';

export interface ScopeJob {
  readonly scope: readonly number[]; // node numbers in scope order
  readonly entry: number;
  readonly backward: boolean;
  readonly packing?: ReadonlyMap<string, number>;
}

export interface BucketerState {
  readonly items: ItemGraph;
  readonly buckets: ManualBucket[];
  readonly foldedCasts: Map<number, number[]>;
}

/** torch's manual_bucket_collectives: every group of the scope bucketed, then one order repair. */
export function bucketScope(st: BucketerState, job: ScopeJob): void {
  const changed = new Set<number>();
  for (const group of groupCollectives(st.items, job.scope)) {
    for (const level of splitIndependent(st.items, group)) {
      const members = job.packing ? packInParamOrder(st.items, level, job.packing) : level;
      bucketGroup(st, members, job, changed);
    }
  }
  sortIfNeeded(st.items, changed);
}

/** torch's _group_collectives: the scope's candidate starts by full bucket key, first-seen order. */
function groupCollectives(items: ItemGraph, scope: readonly number[]): number[][] {
  const g = items.g;
  const groups = new Map<string, number[]>();
  for (const i of scope) {
    if (g.waitOf[i] < 0 || g.candidate[i] !== 1 || !items.list.has(i)) continue;
    const key = g.bucketKey[i]!;
    const list = groups.get(key);
    if (list) list.push(i);
    else groups.set(key, [i]);
  }
  return [...groups.values()];
}

/**
 * torch's _split_independent_collectives: a collective whose input depends on another member's
 * wait goes one bucket later (its level is the longest chain of members ending at it).
 */
function splitIndependent(items: ItemGraph, group: readonly number[]): number[][] {
  if (group.length === 1) return [[...group]];
  const pos = items.list.positions(items.size);
  const level = new Map<number, number>();
  for (const c of [...group].sort((a, b) => pos[a] - pos[b])) {
    const above = memberWaitsAbove(items, group, c, pos);
    level.set(c, 1 + Math.max(0, ...above.map((a) => level.get(a) ?? 1)));
  }
  const out = new Map<number, number[]>();
  for (const c of group) {
    const lv = level.get(c)!;
    const list = out.get(lv);
    if (list) list.push(c);
    else out.set(lv, [c]);
  }
  return [...out.keys()].sort((a, b) => a - b).map((lv) => out.get(lv)!);
}

/** The members whose wait `c`'s start descends from: a walk up its inputs, no earlier than the first wait. */
function memberWaitsAbove(items: ItemGraph, group: readonly number[], c: number, pos: Int32Array): number[] {
  const g = items.g;
  const memberOfWait = new Map(group.map((m) => [g.waitOf[m], m]));
  const floor = Math.min(...group.map((m) => pos[g.waitOf[m]]));
  const seen = new Set<number>();
  const stack = [...items.preds[c]];
  const out: number[] = [];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id) || pos[id] < floor) continue;
    seen.add(id);
    const m = memberOfWait.get(id);
    if (m !== undefined) out.push(m);
    stack.push(...items.preds[id]);
  }
  return out;
}

/** FSDPParamOrderBucketer: members sorted by (their module's FSDP2 parameter order, node number). */
function packInParamOrder(items: ItemGraph, members: readonly number[], order: ReadonlyMap<string, number>): number[] {
  const g = items.g;
  const key = (m: number) => order.get(g.module[m]) ?? g.n;
  return [...members].sort((a, b) => key(a) - key(b) || a - b);
}

/** A member's bucket input: its input, or the folded cast's input (torch's bucket trace inputs). */
function bucketInputs(items: ItemGraph, m: number): number[] {
  const cast = items.g.foldedCast[m];
  return cast >= 0 ? items.preds[cast].slice(0, 1) : items.preds[m].slice(0, 1);
}

/** torch's _bucket_group: merged start after the latest input, merged wait at the first wait or after. */
function bucketGroup(st: BucketerState, members: readonly number[], job: ScopeJob, changed: Set<number>): void {
  const { items } = st;
  const g = items.g;
  const list = items.list;
  const pos = list.positions(items.size);
  const waits = members.map((m) => g.waitOf[m]);
  const firstWait = waits.reduce((a, b) => (pos[b] < pos[a] ? b : a));
  const first = members.reduce((a, b) => (pos[b] < pos[a] ? b : a));
  const inputs = members.flatMap((m) => bucketInputs(items, m));
  const anchor = inputs.reduce((a, b) => (pos[b] > pos[a] ? b : a), first);
  const memberSet = new Set(members);
  let next = list.after(anchor);
  while (next >= 0 && memberSet.has(next)) next = list.after(next);
  const waitPoint = next < 0 || pos[firstWait] <= pos[next] ? next : firstWait;
  const start = items.addItem(inputs);
  const wait = items.addItem([start]);
  list.moveBefore(next, start);
  list.moveBefore(waitPoint, wait);
  const casts: number[] = [];
  for (const m of members) {
    const w = g.waitOf[m];
    for (const u of items.succs[w]) changed.add(u);
    items.redirectReaders(w, wait);
    items.replacedBy[m] = start;
    items.replacedBy[w] = wait;
    items.erase(w);
    items.erase(m);
    const cast = g.foldedCast[m];
    if (cast >= 0) {
      items.erase(cast);
      casts.push(cast);
    }
  }
  changed.add(wait);
  if (casts.length > 0) st.foldedCasts.set(start, casts);
  const kind = g.kind[members[0]]!;
  st.buckets.push({ members, kind, entry: job.entry, backward: job.backward, start, wait });
}
