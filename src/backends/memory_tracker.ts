// Incremental live-bytes tracker used while a backend builds an order node by node.
// Same rules as src/sim/memory.ts `scheduleMemoryProfile` (persistent tensors always live; a
// base tensor is allocated when its producer runs and freed after the last node that touches it;
// a collective's inputs and outputs stay live until its wait; aliases count against their base),
// so that `current` after scheduling every node of an order reproduces that profile.
// Mirrors torch's MemoryTracker (torch/_inductor/fx_passes/memory_estimator.py) in role.

import type { TensorInfo } from '../graph/types';
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

const CACHE = new WeakMap<GraphIndex, MemoryTables>();

/** Per-node allocation / touch tables (cached per graph index). */
export function buildMemoryTables(index: GraphIndex): MemoryTables {
  let t = CACHE.get(index);
  if (t === undefined) {
    t = build(index);
    CACHE.set(index, t);
  }
  return t;
}

function build(index: GraphIndex): MemoryTables {
  const { graph, nodes, n } = index;
  const tensors = graph.tensors;
  // one slot per non-persistent base tensor; every id maps to its base's slot (-1: persistent)
  const slotOfId = new Map<string, number>();
  const bytes: number[] = [];
  const baseSlot = new Map<string, number>();
  const slotFor = (id: string): number => {
    let s = slotOfId.get(id);
    if (s !== undefined) return s;
    const base = baseOf(tensors, id);
    if (tensors[base]?.persistent) s = -1;
    else {
      s = baseSlot.get(base);
      if (s === undefined) {
        s = bytes.length;
        baseSlot.set(base, s);
        bytes.push(tensors[base]?.bytes ?? 0);
      }
    }
    slotOfId.set(id, s);
    return s;
  };
  const S0 = () => bytes.length;
  // which slots have a producer (a node writing the base itself, not an alias)
  const produced = new Set<number>();
  for (const node of nodes) {
    for (const t of node.outputs) {
      const s = slotFor(t);
      if (s >= 0 && baseOf(tensors, t) === t) produced.add(s);
    }
  }
  const allocs: number[][] = new Array(n);
  const touches: number[][] = Array.from({ length: n }, () => []);
  const inputsOnly = new Set<number>();
  const addTouch = (node: number, s: number) => {
    const list = touches[node]; // a handful of entries: includes() is the cheap dedupe
    if (list.length > 0 && list.includes(s)) return;
    list.push(s);
  };
  for (let i = 0; i < n; i++) {
    const node = nodes[i];
    const isColl = node.kind === 'all_gather' || node.kind === 'reduce_scatter';
    const endAt = isColl ? index.waitOfColl[i] : i;
    const a: number[] = [];
    for (const id of node.outputs) {
      const s = slotFor(id);
      if (s < 0) continue;
      if (tensors[id]?.aliasOf === undefined) a.push(s);
      else if (!produced.has(s)) inputsOnly.add(s);
      addTouch(i, s);
      if (isColl && endAt >= 0) addTouch(endAt, s);
    }
    for (const id of node.inputs) {
      const s = slotFor(id);
      if (s < 0) continue;
      if (!produced.has(s)) inputsOnly.add(s);
      addTouch(i, s);
      if (isColl && endAt >= 0) addTouch(endAt, s);
    }
    allocs[i] = a;
  }
  let initial = 0;
  for (const t of Object.values(tensors)) if (t.persistent && t.aliasOf === undefined) initial += t.bytes;
  for (const s of inputsOnly) initial += bytes[s];
  const baseBytes = Float64Array.from(bytes);
  const allocOff = new Int32Array(n + 1);
  const touchOff = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    allocOff[i + 1] = allocOff[i] + allocs[i].length;
    touchOff[i + 1] = touchOff[i] + touches[i].length;
  }
  const allocIdx = new Int32Array(allocOff[n]);
  const touchIdx = new Int32Array(touchOff[n]);
  const touchCount = new Int32Array(S0());
  for (let i = 0; i < n; i++) {
    allocIdx.set(allocs[i], allocOff[i]);
    touchIdx.set(touches[i], touchOff[i]);
    for (const s of touches[i]) touchCount[s]++;
  }
  return { baseBytes, allocOff, allocIdx, touchOff, touchIdx, touchCount, initialBytes: initial };
}

/** Live bytes as nodes are scheduled one at a time (in any topological order). */
export class IncrementalMemory {
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

