// The simulator's memory curve on dense indices: the same rules and numbers as
// tensorLifetimes + MemoryTracker (src/sim/memory.ts), without string-keyed maps or one object
// per alloc / free. Tensor facts (each id's root storage, its bytes, persistence) depend only on
// the graph's tensor table, which every backend's rewritten graph shares, so they are indexed once
// per table (WeakMap) and reused by every backend and every simulation of it.

import { hbmBytes, type GraphNode, type TensorInfo } from '../graph';
import type { MemoryCurve } from '../trace';
import { weakMemo } from '../util';
import { baseOf } from './memory';

/** Dense view of a tensor table: slot per non-persistent base, -1 for persistent roots. */
interface TensorTable {
  /** Tensor id → slot of its root storage (-1: persistent, never freed); absent ids count 0 bytes. */
  readonly slotOf: ReadonlyMap<string, number>;
  /** Ids that are their own root (an output that allocates where it is produced). */
  readonly isOwnBase: ReadonlySet<string>;
  readonly bytes: Float64Array;
  readonly persistentBytes: number;
}

const TABLES = weakMemo((tensors: Readonly<Record<string, TensorInfo>>) => tensors, buildTable);

function tensorTable(tensors: Readonly<Record<string, TensorInfo>>): TensorTable {
  return TABLES(tensors);
}

function buildTable(tensors: Readonly<Record<string, TensorInfo>>): TensorTable {
  const slotOf = new Map<string, number>();
  const isOwnBase = new Set<string>();
  const bytes: number[] = [];
  let persistent = 0;
  const baseSlot = new Map<string, number>();
  for (const id of Object.keys(tensors)) {
    const info = tensors[id];
    if (info.persistent && info.aliasOf === undefined) persistent += info.bytes;
    const base = baseOf(tensors, id);
    if (base === id) isOwnBase.add(id);
    const bi = tensors[base];
    if (bi?.persistent) {
      slotOf.set(id, -1);
      continue;
    }
    let s = baseSlot.get(base);
    if (s === undefined) {
      s = bytes.length;
      bytes.push(hbmBytes(bi));
      baseSlot.set(base, s);
    }
    slotOf.set(id, s);
  }
  return { slotOf, isOwnBase, bytes: Float64Array.from(bytes), persistentBytes: persistent };
}

/**
 * Memory curve of one rank that ran `nodes` (its schedule's first nodes) with node i live over
 * [startUs[i], endOf(i)]; identical to MemoryTracker over tensorLifetimes (frees before allocs at
 * equal times; at equal time and size the order cannot change a partial sum).
 */
export function fastMemoryCurve(
  rank: number,
  tensors: Readonly<Record<string, TensorInfo>>,
  nodes: readonly GraphNode[],
  count: number,
  startUs: Float64Array,
  endUs: Float64Array,
  endOfStepUs: number,
): MemoryCurve {
  const tab = tensorTable(tensors);
  const m = tab.bytes.length;
  const alloc = new Float64Array(m);
  const free = new Float64Array(m);
  const seen = new Uint8Array(m);
  const order: number[] = []; // slots in first-touch order
  const touch = (slot: number, allocAt: number, useEnd: number) => {
    if (!seen[slot]) {
      seen[slot] = 1;
      order.push(slot);
      alloc[slot] = Number.isNaN(allocAt) ? 0 : allocAt;
      free[slot] = useEnd;
    } else {
      if (!Number.isNaN(allocAt)) alloc[slot] = Math.min(alloc[slot], allocAt);
      free[slot] = Math.max(free[slot], useEnd);
    }
  };
  const { slotOf, isOwnBase } = tab;
  for (let i = 0; i < count; i++) {
    const n = nodes[i];
    const s = startUs[i];
    const e = Number.isNaN(endUs[i]) ? endOfStepUs : endUs[i]; // a collective that never ran holds its buffers
    for (const id of n.outputs) {
      const slot = slotOf.get(id);
      if (slot !== undefined && slot >= 0) touch(slot, isOwnBase.has(id) ? s : Number.NaN, e);
    }
    for (const id of n.inputs) {
      const slot = slotOf.get(id);
      if (slot !== undefined && slot >= 0) touch(slot, Number.NaN, e);
    }
  }
  // changes: +bytes at alloc, −bytes at free, zero-byte tensors dropped
  const tc: number[] = [];
  const dc: number[] = [];
  for (const slot of order) {
    const b = tab.bytes[slot];
    if (b === 0) continue;
    tc.push(alloc[slot], free[slot]);
    dc.push(b, -b);
  }
  const T = Float64Array.from(tc);
  const D = Float64Array.from(dc);
  const idx = new Uint32Array(T.length);
  for (let k = 0; k < idx.length; k++) idx[k] = k;
  idx.sort((a, b) => T[a] - T[b] || D[a] - D[b] || a - b);
  const t: number[] = [0];
  const bytes: number[] = [tab.persistentBytes];
  let live = tab.persistentBytes;
  let peakBytes = live;
  for (let k = 0; k < idx.length; k++) {
    const c = idx[k];
    live += D[c];
    if (live > peakBytes) peakBytes = live;
    if (t[t.length - 1] === T[c]) bytes[bytes.length - 1] = live;
    else {
      t.push(T[c]);
      bytes.push(live);
    }
  }
  return { rank, t, bytes, peakBytes };
}
