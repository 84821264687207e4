// Incremental live-bytes tracker used while a backend builds an order node by node.
// Same rules as src/sim/memory.ts `scheduleMemoryProfile` (persistent tensors always live; a
// base tensor is allocated when its producer runs and freed after the last node that touches it;
// a collective's inputs and outputs stay live until its wait; aliases count against their base),
// so that `current` after scheduling every node of an order reproduces that profile.
// Mirrors torch's MemoryTracker (torch/_inductor/fx_passes/memory_estimator.py) in role.

import { hbmBytes, type TensorInfo } from '../graph';
import { weakMemo } from '../util';
import type { GraphIndex } from './graph_index';

/** The tensor whose storage `id` views (itself when it is no alias). */
export function baseOf(tensors: Readonly<Record<string, TensorInfo>>, id: string): string {
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

/**
 * Numbers the non-persistent base tensors as they are first met: `codeOf(id)` is 2·slot of the id's
 * base (+1 when the id is an alias), or -1 for a persistent one; `bytes[slot]` is the base's size.
 */
interface SlotCoder {
  readonly codeOf: (id: string) => number;
  readonly bytes: number[];
}

function slotCoder(tensors: Readonly<Record<string, TensorInfo>>): SlotCoder {
  const code = new Map<string, number>();
  const bytes: number[] = [];
  const baseSlot = new Map<string, number>();
  const slotOf = (base: string): number => {
    let slot = baseSlot.get(base);
    if (slot === undefined) {
      slot = bytes.length;
      baseSlot.set(base, slot);
      bytes.push(hbmBytes(tensors[base]));
    }
    return slot;
  };
  const codeOf = (id: string): number => {
    let c = code.get(id);
    if (c !== undefined) return c;
    const base = baseOf(tensors, id);
    c = tensors[base]?.persistent ? -1 : 2 * slotOf(base) + (base === id ? 0 : 1);
    code.set(id, c);
    return c;
  };
  return { codeOf, bytes };
}

/** Which slots have a producer (a node writing the base itself, not an alias); numbers every output's slot. */
function producedSlots(index: GraphIndex, coder: SlotCoder): Uint8Array {
  const producedList: number[] = [];
  for (const node of index.nodes) {
    for (const t of node.outputs) {
      const c = coder.codeOf(t);
      if (c >= 0 && (c & 1) === 0) producedList.push(c >> 1);
    }
  }
  const produced = new Uint8Array(coder.bytes.length);
  for (const sl of producedList) produced[sl] = 1;
  return produced;
}

/** The CSR tables of bases each node allocates and touches, filled in one pass over the nodes. */
class TouchTables {
  readonly inputOnly: Uint8Array; // slots used but never produced (step inputs): live from the start
  readonly allocOff: Int32Array;
  readonly touchOff: Int32Array;
  readonly allocIdx: number[] = [];
  readonly touchIdx: number[] = [];
  readonly touchCount: Int32Array;
  private readonly lastTouch: Int32Array;

  constructor(
    private readonly index: GraphIndex,
    private readonly coder: SlotCoder,
    private readonly produced: Uint8Array,
  ) {
    const slots = produced.length;
    this.inputOnly = new Uint8Array(slots);
    this.lastTouch = new Int32Array(slots).fill(-1);
    this.touchCount = new Int32Array(slots);
    this.allocOff = new Int32Array(index.n + 1);
    this.touchOff = new Int32Array(index.n + 1);
    for (let i = 0; i < index.n; i++) this.addNode(i);
  }

  private addNode(i: number): void {
    const node = this.index.nodes[i];
    for (const id of node.outputs) {
      const c = this.coder.codeOf(id);
      if (c < 0) continue;
      if ((c & 1) === 0) {
        if (this.lastTouch[c >> 1] !== i) this.allocIdx.push(c >> 1); // its own base: allocated here
      } else if (!this.produced[c >> 1]) this.inputOnly[c >> 1] = 1;
      this.touch(i, c);
    }
    for (const id of node.inputs) {
      const c = this.coder.codeOf(id);
      if (c < 0) continue;
      if (!this.produced[c >> 1]) this.inputOnly[c >> 1] = 1;
      this.touch(i, c);
    }
    // a collective's buffers stay in use until it ends: its wait touches them too
    const coll = this.index.collOfWait[i];
    if (coll >= 0) {
      this.touchAll(i, this.index.nodes[coll].outputs);
      this.touchAll(i, this.index.nodes[coll].inputs);
    }
    this.allocOff[i + 1] = this.allocIdx.length;
    this.touchOff[i + 1] = this.touchIdx.length;
  }

  private touchAll(i: number, ids: readonly string[]): void {
    for (const id of ids) {
      const c = this.coder.codeOf(id);
      if (c >= 0) this.touch(i, c);
    }
  }

  private touch(i: number, c: number): void {
    const sl = c >> 1;
    if (this.lastTouch[sl] === i) return;
    this.lastTouch[sl] = i;
    this.touchIdx.push(sl);
    this.touchCount[sl]++;
  }
}

/** Bytes live before the first node: persistent bases, and the bases used that no node produces. */
function initialLiveBytes(
  tensors: Readonly<Record<string, TensorInfo>>,
  bytes: readonly number[],
  inputOnly: Uint8Array,
): number {
  let initial = 0;
  for (const id in tensors) {
    const t = tensors[id];
    if (t.persistent && t.aliasOf === undefined) initial += t.bytes;
  }
  for (let sl = 0; sl < inputOnly.length; sl++) if (inputOnly[sl]) initial += bytes[sl];
  return initial;
}

function build(index: GraphIndex): MemoryTables {
  const tensors = index.graph.tensors;
  const coder = slotCoder(tensors);
  const produced = producedSlots(index, coder);
  const t = new TouchTables(index, coder, produced);
  return {
    baseBytes: Float64Array.from(coder.bytes),
    allocOff: t.allocOff,
    allocIdx: Int32Array.from(t.allocIdx),
    touchOff: t.touchOff,
    touchIdx: Int32Array.from(t.touchIdx),
    touchCount: t.touchCount,
    initialBytes: initialLiveBytes(tensors, coder.bytes, t.inputOnly),
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
