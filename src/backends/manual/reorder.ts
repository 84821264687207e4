// torch's ManualOverlapScheduler._manual_reorder_graph (torch 2.15) and torchtitan's joint
// override (JointManualOverlapScheduler: per-direction all-gather pairing, reduce-scatters only):
// overlap dependencies found in one walk down the order (a bucket's reduce-scatter wait is deferred
// until the next bucket's reduce-scatter has started) and one walk up it (the next all-gather
// bucket starts before this bucket's wait; the first ones before the first compute node), then
// torch's _move_overlap_nodes moves the nodes to honour them.

import type { ItemGraph } from './item_graph';
import type { ManualBucket, ManualMode, OverlapDep } from './manual_graph';
import { sortIfNeeded } from './stable_sort';

type Deps = Map<number, Set<number>>;

function addDep(deps: Deps, target: number, source: number): void {
  const set = deps.get(target);
  if (set) set.add(source);
  else deps.set(target, new Set([source]));
}

interface BucketItems {
  readonly startOf: Map<number, ManualBucket>;
  readonly waitOf: Map<number, ManualBucket>;
}

function bucketItems(buckets: readonly ManualBucket[]): BucketItems {
  return {
    startOf: new Map(buckets.map((b) => [b.start, b])),
    waitOf: new Map(buckets.map((b) => [b.wait, b])),
  };
}

/** The down walk: each gradient bucket's wait waits for the next gradient bucket's start. */
function gradientDeps(order: readonly number[], bi: BucketItems, mode: ManualMode, deps: Deps): void {
  const isGrad = (b: ManualBucket | undefined) =>
    b !== undefined && (b.kind === 'reduce_scatter' || (mode === 'jit' && b.kind === 'all_reduce'));
  let delayed: number[] = [];
  let current: number[] = [];
  for (const id of order) {
    if (isGrad(bi.startOf.get(id))) current.push(id);
    else if (isGrad(bi.waitOf.get(id))) {
      if (current.length > 0) {
        for (const d of delayed) for (const s of current) addDep(deps, d, s);
        delayed = [];
        current = [];
      }
      delayed.push(id);
    }
  }
}

/**
 * The up walk: an all-gather bucket's wait depends on the all-gather starts between it and the next
 * wait; starts left over attach to the earliest compute node. jit pairs across the whole graph;
 * joint pairs per direction, and counts only compute nodes inside a plan scope of that direction.
 */
function gatherDeps(
  items: ItemGraph,
  order: readonly number[],
  bi: BucketItems,
  mode: ManualMode,
  inScope: Uint8Array,
  deps: Deps,
): void {
  const g = items.g;
  const picked: number[][] = [[], []];
  const lastCompute = [-1, -1];
  const direction = (id: number): number => {
    const b = bi.startOf.get(id) ?? bi.waitOf.get(id);
    if (mode === 'jit') return 0;
    return b !== undefined ? Number(b.backward) : g.backward[id];
  };
  for (let k = order.length - 1; k >= 0; k--) {
    const id = order[k];
    const d = direction(id);
    if (bi.startOf.get(id)?.kind === 'all_gather') {
      picked[d].push(id);
      continue;
    }
    if (bi.waitOf.get(id)?.kind === 'all_gather') {
      for (const s of picked[d]) addDep(deps, id, s);
      picked[d] = [];
    }
    if (id < g.n && g.compute[id] === 1 && (mode === 'jit' || inScope[id] === 1)) lastCompute[d] = id;
  }
  // torch asks whether a picked start is an ancestor of that compute node in the graph as it was
  // before bucketing; a merged start is new to it, so the answer is always no
  for (const d of [1, 0]) {
    if (lastCompute[d] < 0) continue;
    for (const s of picked[d]) addDep(deps, lastCompute[d], s);
  }
}

/** torch's overlap dependencies, in its insertion order. */
export function overlapDeps(
  items: ItemGraph,
  buckets: readonly ManualBucket[],
  mode: ManualMode,
  inScope: Uint8Array,
): OverlapDep[] {
  const order = items.list.toArray();
  const bi = bucketItems(buckets);
  const deps: Deps = new Map();
  gradientDeps(order, bi, mode, deps);
  gatherDeps(items, order, bi, mode, inScope, deps);
  return [...deps].map(([target, sources]) => ({ target, sources: [...sources] }));
}

/** torch's _collect_nodes_must_be_after: the node and its readers that read nothing else. */
function mustBeAfter(items: ItemGraph, id: number): number[] {
  const out = [id];
  const set = new Set(out);
  for (let i = 0; i < out.length; i++) {
    for (const u of items.succs[out[i]]) {
      if (!set.has(u) && items.preds[u].every((p) => set.has(p))) {
        set.add(u);
        out.push(u);
      }
    }
  }
  return out;
}

/** torch's _collect_nodes_must_be_before: non-placeholder inputs at or after `earliest`, in order. */
function mustBeBefore(items: ItemGraph, id: number, pos: Int32Array, earliest: number): number[] {
  const seen = new Set<number>();
  const stack = [id];
  while (stack.length > 0) {
    const cur = stack.pop()!;
    if (seen.has(cur) || items.isPlaceholder(cur) || pos[cur] < earliest) continue;
    seen.add(cur);
    stack.push(...items.preds[cur]);
  }
  return [...seen].sort((a, b) => pos[a] - pos[b]);
}

/** torch's _move_overlap_nodes: gradient waits moved after the latest start, gathers before the wait. */
export function moveOverlapNodes(
  items: ItemGraph,
  deps: readonly OverlapDep[],
  buckets: readonly ManualBucket[],
): void {
  const kindOf = new Map(buckets.map((b) => [b.start, b.kind]));
  const moved = new Set<number>();
  const list = items.list;
  const gathers = (d: OverlapDep, want: boolean) => d.sources.filter((s) => (kindOf.get(s) === 'all_gather') === want);
  const defer = deps.map((d) => ({ target: d.target, sources: gathers(d, false) }));
  const prefetch = deps.map((d) => ({ target: d.target, sources: gathers(d, true) }));
  let pos = list.positions(items.size);
  for (const { target, sources } of defer) {
    if (sources.length === 0) continue;
    let after = sources.reduce((a, b) => (pos[b] > pos[a] ? b : a));
    for (const id of mustBeAfter(items, target)) {
      moved.add(id);
      list.moveAfter(after, id);
      after = id;
    }
  }
  pos = list.positions(items.size);
  for (const { target, sources } of prefetch) {
    const targetPos = pos[target];
    for (const s of [...sources].sort((a, b) => pos[a] - pos[b])) {
      if (pos[s] < targetPos) continue;
      for (const id of mustBeBefore(items, s, pos, targetPos)) {
        moved.add(id);
        list.moveBefore(target, id);
      }
    }
  }
  sortIfNeeded(items, moved);
}
