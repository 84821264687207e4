// torch's _stable_topological_sort (torch/_dynamo/graph_deduplication.py), which the manual pass
// runs when a rewrite left an edge pointing backward: walk the order; a node with an input not yet
// placed waits for it and is placed right after it; the output node stays last.

import { FsdpSimError } from '../../errors';
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
  const size = items.size;
  const ready = new Uint8Array(size);
  const resume = new Int32Array(size).fill(-1); // a blocked node: how many of its inputs remain to scan
  const waitHead = new Int32Array(size).fill(-1); // per input: the first node waiting for it
  const waitTail = new Int32Array(size).fill(-1);
  const waitNext = new Int32Array(size).fill(-1); // a waiting node → the next one waiting for the same input
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
    let k = resume[id] >= 0 ? resume[id] : deps.length;
    while (k > 0 && ready[deps[k - 1]] === 1) k--;
    if (k > 0) {
      const dep = deps[k - 1];
      resume[id] = k - 1;
      waitNext[id] = -1;
      if (waitTail[dep] < 0) waitHead[dep] = id;
      else waitNext[waitTail[dep]] = id;
      waitTail[dep] = id;
      continue;
    }
    ready[id] = 1;
    placed.push(id);
    const woken: number[] = [];
    for (let w = waitHead[id]; w >= 0; w = waitNext[w]) woken.push(w);
    waitHead[id] = -1;
    waitTail[id] = -1;
    for (let j = woken.length - 1; j >= 0; j--) pending.push(woken[j]);
  }
  if (placed.length + outputs.length < order.length) {
    throw new FsdpSimError('manual_scheduler', 'the manual scheduler left a cycle in the graph it rewrote');
  }
  for (const id of order) items.list.remove(id);
  for (const id of [...placed, ...outputs]) items.list.pushBack(id);
}
