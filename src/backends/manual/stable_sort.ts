// torch's _stable_topological_sort (torch/_dynamo/graph_deduplication.py), which the manual pass
// runs when a rewrite left an edge pointing backward: walk the order; a node with an input not yet
// placed waits for it and is placed right after it; the output node stays last.

import type { ItemGraph } from './item_graph';

/** torch's _do_stable_topological_sort_if_needed: sorts when a changed item has a late input or an early reader. */
export function sortIfNeeded(items: ItemGraph, changed: Iterable<number>): void {
  const pos = items.list.positions(items.size);
  for (const id of changed) {
    if (pos[id] < 0) continue;
    const late = items.preds[id].some((p) => pos[p] > pos[id]);
    const early = items.succs[id].some((u) => pos[u] >= 0 && pos[u] < pos[id]);
    if (late || early) return stableSort(items);
  }
}

/** The order rebuilt by torch's algorithm (inputs scanned last to first, as torch does). */
function stableSort(items: ItemGraph): void {
  const order = items.list.toArray();
  const ready = new Uint8Array(items.size);
  const waiting = new Map<number, number[]>();
  const resume = new Map<number, number>(); // a blocked node → how many of its inputs remain to scan
  const pending = [...order].reverse();
  const placed: number[] = [];
  const outputs: number[] = [];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (items.isOutput(id)) {
      outputs.push(id);
      continue;
    }
    const deps = items.preds[id];
    let k = resume.get(id) ?? deps.length;
    resume.delete(id);
    while (k > 0 && ready[deps[k - 1]] === 1) k--;
    if (k > 0) {
      const dep = deps[k - 1];
      resume.set(id, k - 1);
      const list = waiting.get(dep);
      if (list) list.push(id);
      else waiting.set(dep, [id]);
      continue;
    }
    ready[id] = 1;
    placed.push(id);
    const woken = waiting.get(id);
    waiting.delete(id);
    if (woken) for (let j = woken.length - 1; j >= 0; j--) pending.push(woken[j]);
  }
  if (waiting.size > 0) throw new Error('manual scheduler: the rewritten graph has a cycle');
  for (const id of order) items.list.remove(id);
  for (const id of [...placed, ...outputs]) items.list.pushBack(id);
}
