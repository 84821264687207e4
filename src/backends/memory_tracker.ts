// Incremental live-bytes tracker used while a backend builds an order node by node.
// Same rules as src/sim/memory.ts `scheduleMemoryProfile` (persistent tensors always live; a
// base tensor is allocated when its producer runs and freed after the last node that touches it;
// a collective's inputs and outputs stay live until its wait; aliases count against their base),
// so that `current` after scheduling every node of an order reproduces that profile.
// Mirrors torch's MemoryTracker (torch/_inductor/fx_passes/memory_estimator.py) in role.

import type { TensorInfo } from '../graph';
import { weakMemo } from '../util';
import type { GraphIndex } from './graph_index';

function baseOf(tensors: Readonly<Record<string, TensorInfo>>, id: string): string {
  let cur = id;
  for (let hops = 0; hops < 64; hops++) {
    const next = tensors[cur]?.aliasOf;
    if (next === undefined || next === cur) return cur;
    cur = next;
  }
  return cur;
}

/** Static per-node tables shared by every tracker over the same graph index. */
export interface MemoryTables {
  readonly baseBytes: Float64Array; // bytes per base tensor slot
  readonly allocOff: Int32Array; // CSR: bases allocated by node i
  readonly allocIdx: Int32Array;
  readonly touchOff: Int32Array; // CSR: distinct bases touched by node i (freed after the last toucher)
  readonly touchIdx: Int32Array;
  readonly touchCount: Int32Array; // touchers per base
  readonly initialBytes: number; // persistent bytes + step inputs with no producer
}

const CACHE = weakMemo((index: GraphIndex) => index, build);

/** Per-node allocation / touch tables (cached per graph index). */
export function buildMemoryTables(index: GraphIndex): MemoryTables {
  return CACHE(index);
}

function build(index: GraphIndex): MemoryTables {
  const { graph, nodes, n } = index;
  const tensors = graph.tensors;
  // every tensor id → 2·slot of its non-persistent base (+1 when the id is an alias), or -1
  const code = new Map<string, number>();
  const bytes: number[] = [];
  const baseSlot = new Map<string, number>();
  const codeOf = (id: string): number => {
    let c = code.get(id);
    if (c !== undefined) return c;
    const base = baseOf(tensors, id);
    if (tensors[base]?.persistent) c = -1;
    else {
      let slot = baseSlot.get(base);
      if (slot === undefined) {
        slot = bytes.length;
        baseSlot.set(base, slot);
        bytes.push(tensors[base]?.bytes ?? 0);
      }
      c = 2 * slot + (base === id ? 0 : 1);
    }
    code.set(id, c);
    return c;
  };
  // which slots have a producer (a node writing the base itself, not an alias)
  const producedList: number[] = [];
  for (const node of nodes) {
    for (const t of node.outputs) {
      const c = codeOf(t);
      if (c >= 0 && (c & 1) === 0) producedList.push(c >> 1);
    }
  }
  const S = bytes.length;
  const produced = new Uint8Array(S);
  for (const sl of producedList) produced[sl] = 1;
  const inputOnly = new Uint8Array(S);
  const lastTouch = new Int32Array(S).fill(-1);
  const allocOff = new Int32Array(n + 1);
  const touchOff = new Int32Array(n + 1);
  const allocIdx: number[] = [];
  const touchIdx: number[] = [];
  const touchCount = new Int32Array(S);
  const touch = (i: number, c: number) => {
    const sl = c >> 1;
    if (lastTouch[sl] === i) return;
    lastTouch[sl] = i;
    touchIdx.push(sl);
    touchCount[sl]++;
  };
  for (let i = 0; i < n; i++) {
    const node = nodes[i];
    for (const id of node.outputs) {
      const c = codeOf(id);
      if (c < 0) continue;
      if ((c & 1) === 0) {
        if (lastTouch[c >> 1] !== i) allocIdx.push(c >> 1); // its own base: allocated here
      } else if (!produced[c >> 1]) inputOnly[c >> 1] = 1;
      touch(i, c);
    }
    for (const id of node.inputs) {
      const c = codeOf(id);
      if (c < 0) continue;
      if (!produced[c >> 1]) inputOnly[c >> 1] = 1;
      touch(i, c);
    }
    // a collective's buffers stay in use until it ends: its wait touches them too
    const coll = index.collOfWait[i];
    if (coll >= 0) {
      for (const id of nodes[coll].outputs) {
        const c = codeOf(id);
        if (c >= 0) touch(i, c);
      }
      for (const id of nodes[coll].inputs) {
        const c = codeOf(id);
        if (c >= 0) touch(i, c);
      }
    }
    allocOff[i + 1] = allocIdx.length;
    touchOff[i + 1] = touchIdx.length;
  }
  let initial = 0;
  for (const id in tensors) {
    const t = tensors[id];
    if (t.persistent && t.aliasOf === undefined) initial += t.bytes;
  }
  for (let sl = 0; sl < S; sl++) if (inputOnly[sl]) initial += bytes[sl];
  return {
    baseBytes: Float64Array.from(bytes), allocOff, allocIdx: Int32Array.from(allocIdx), touchOff,
    touchIdx: Int32Array.from(touchIdx), touchCount, initialBytes: initial,
  };
}

/** Live bytes as nodes are scheduled one at a time (in any topological order). */
class IncrementalMemory {
  private readonly remaining: Int32Array;
  private readonly allocated: Uint8Array;
  /** Live bytes after the last scheduled node's frees. */
  current: number;
  /** Highest live bytes seen while a node ran (its outputs allocated, nothing freed yet). */
  peak: number;

  constructor(private readonly tables: MemoryTables) {
    this.remaining = tables.touchCount.slice();
    this.allocated = new Uint8Array(tables.baseBytes.length);
    this.current = tables.initialBytes;
    this.peak = tables.initialBytes;
  }

  /** Schedules node i; returns the live bytes while it ran. */
  schedule(i: number): number {
    this.alloc(i);
    const during = this.current;
    if (during > this.peak) this.peak = during;
    this.release(i);
    return during;
  }

  /** Schedules merged nodes (a bucket's members) as one: every allocation, then every free. */
  scheduleMerged(members: readonly number[]): number {
    for (const i of members) this.alloc(i);
    const during = this.current;
    if (during > this.peak) this.peak = during;
    for (const i of members) this.release(i);
    return during;
  }

  private alloc(i: number): void {
    const t = this.tables;
    for (let k = t.allocOff[i]; k < t.allocOff[i + 1]; k++) {
      const s = t.allocIdx[k];
      if (!this.allocated[s]) {
        this.allocated[s] = 1;
        this.current += t.baseBytes[s];
      }
    }
  }

  private release(i: number): void {
    const t = this.tables;
    for (let k = t.touchOff[i]; k < t.touchOff[i + 1]; k++) {
      const s = t.touchIdx[k];
      if (--this.remaining[s] === 0) this.current -= t.baseBytes[s];
    }
  }
}

/** Live bytes while each position of `order` runs, and the peak (same numbers as scheduleMemoryProfile). */
export function orderMemory(tables: MemoryTables, order: ArrayLike<number>): { live: Float64Array; peak: number } {
  const mem = new IncrementalMemory(tables);
  const live = new Float64Array(order.length);
  for (let p = 0; p < order.length; p++) live[p] = mem.schedule(order[p]);
  return { live, peak: mem.peak };
}

