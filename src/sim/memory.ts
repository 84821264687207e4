// Tensor liveness → live bytes, for one rank. Two views of the same rules:
//  - scheduleMemoryProfile: static, time-free, in schedule order (what the autobucketing memory
//    budget reads, like torch's overlap scheduler estimating peak memory over the node order);
//  - MemoryTracker: the simulator's timed version (alloc / free at event times) → MemoryCurve.
// Rules (docs/ARCHITECTURE.md §5): persistent tensors are always live; a tensor is allocated when
// its producer starts (an all-gather's output when the collective is issued); it is freed after
// its last reader ends, where a collective "ends" at its wait (reduce-scatter input freed when the
// RS ends); aliases count once, against their base, and extend the base's life; a host tensor
// (CPU offload) takes no HBM.

import { hbmBytes, isCollectiveKind, type GraphNode, type StepGraph, type TensorInfo } from '../graph';
import type { MemoryCurve } from '../trace';
import { weakMemo } from '../util';

/** Root storage of a tensor id (follows aliasOf). Unknown ids are their own root. */
export function baseOf(tensors: Readonly<Record<string, TensorInfo>>, id: string): string {
  let cur = id;
  for (let hops = 0; hops < 64; hops++) {
    const next = tensors[cur]?.aliasOf;
    if (next === undefined || next === cur) return cur;
    cur = next;
  }
  return cur; // alias cycle: stop rather than loop (a verifier reports it elsewhere)
}

// backends' rewritten graphs share the input graph's tensor table (graphs are immutable): sum it once
const PERSISTENT = weakMemo((tensors: Readonly<Record<string, TensorInfo>>) => tensors, sumPersistent);

/** Sum of the bytes of persistent base tensors (aliases excluded). */
export function persistentBytes(graph: StepGraph): number {
  return PERSISTENT(graph.tensors);
}

function sumPersistent(tensors: Readonly<Record<string, TensorInfo>>): number {
  let total = 0;
  for (const t of Object.values(tensors)) if (t.persistent && t.aliasOf === undefined) total += t.bytes;
  return total;
}

export interface ScheduleMemoryProfile {
  /** Live bytes while each position of the order runs (its outputs allocated, nothing freed yet). */
  readonly liveBytes: readonly number[];
  readonly peakBytes: number;
  /** Position in the order where the peak is first reached (-1 for an empty order). */
  readonly peakIndex: number;
  readonly persistentBytes: number;
}

/** Positions (in `nodes`) of each collective's wait, by collective name. */
function waitPositions(nodes: readonly GraphNode[]): Map<string, number> {
  const pos = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (n.kind === 'wait' && n.waitOf !== undefined && !pos.has(n.waitOf)) pos.set(n.waitOf, i);
  });
  return pos;
}

export interface LiveInterval {
  alloc: number;
  free: number;
  bytes: number;
}

/**
 * Lifetime of every non-persistent base tensor, in whatever clock `startOf` / `endOf` use
 * (positions for the static profile, µs for the simulator). `endOf(i)` of a collective is when it
 * ends (its wait), so its input and output stay live until then. A base first seen as an input
 * has no producer here: a step input, live from `origin`.
 */
export function tensorLifetimes(
  graph: StepGraph,
  nodes: readonly GraphNode[],
  startOf: (i: number) => number,
  endOf: (i: number) => number,
  origin = 0,
): Map<string, LiveInterval> {
  const { tensors } = graph;
  const out = new Map<string, LiveInterval>();
  const touch = (id: string, allocAt: number | undefined, useEnd: number) => {
    const base = baseOf(tensors, id);
    const info = tensors[base];
    if (info?.persistent) return;
    const cur = out.get(base);
    if (cur === undefined) out.set(base, { alloc: allocAt ?? origin, free: useEnd, bytes: hbmBytes(info) });
    else {
      if (allocAt !== undefined) cur.alloc = Math.min(cur.alloc, allocAt);
      cur.free = Math.max(cur.free, useEnd);
    }
  };
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    const s = startOf(i);
    const e = endOf(i);
    // an output that is its own base is allocated here; an alias output only extends its base's life
    for (const id of n.outputs) touch(id, baseOf(tensors, id) === id ? s : undefined, e);
    for (const id of n.inputs) touch(id, undefined, e);
  }
  return out;
}

/** Lifetimes in positions of `nodes`: a collective ends at its wait (or the last position). */
export function liveIntervals(graph: StepGraph, nodes: readonly GraphNode[]): Map<string, LiveInterval> {
  const waits = waitPositions(nodes);
  const last = nodes.length - 1;
  return tensorLifetimes(
    graph,
    nodes,
    (i) => i,
    (i) => {
      const n = nodes[i];
      return isCollectiveKind(n.kind) ? (waits.get(n.name) ?? last) : i;
    },
  );
}

/**
 * Static peak-memory estimate of one rank running `graph` in `order` (node ids or nodes; default
 * graph order). Time-free: only the order matters, so a backend can compare candidate orders.
 */
export function scheduleMemoryProfile(
  graph: StepGraph,
  order?: readonly (number | GraphNode)[],
): ScheduleMemoryProfile {
  const nodes: readonly GraphNode[] =
    order === undefined ? graph.nodes : order.map((x) => (typeof x === 'number' ? graph.nodes[x] : x));
  const persistent = persistentBytes(graph);
  const delta = new Float64Array(nodes.length + 1); // alloc at start of pos, free after pos
  for (const iv of liveIntervals(graph, nodes).values()) {
    delta[iv.alloc] += iv.bytes;
    delta[iv.free + 1] -= iv.bytes;
  }
  const liveBytes: number[] = new Array(nodes.length);
  let live = persistent;
  let peakBytes = nodes.length === 0 ? persistent : -Infinity;
  let peakIndex = -1;
  for (let i = 0; i < nodes.length; i++) {
    live += delta[i];
    liveBytes[i] = live;
    if (live > peakBytes) {
      peakBytes = live;
      peakIndex = i;
    }
  }
  return { liveBytes, peakBytes, peakIndex, persistentBytes: persistent };
}

/** Builds a MemoryCurve from timed alloc/free changes (the simulator's view). */
export class MemoryTracker {
  private readonly changes: { t: number; d: number; seq: number }[] = [];
  private seq = 0;
  constructor(
    readonly rank: number,
    private readonly baseBytes: number,
  ) {}

  alloc(tUs: number, bytes: number): void {
    if (bytes !== 0) this.changes.push({ t: tUs, d: bytes, seq: this.seq++ });
  }

  free(tUs: number, bytes: number): void {
    if (bytes !== 0) this.changes.push({ t: tUs, d: -bytes, seq: this.seq++ });
  }

  /** One point per distinct time; at equal times frees apply before allocs (a buffer reused at once). */
  curve(): MemoryCurve {
    const sorted = [...this.changes].sort((a, b) => a.t - b.t || a.d - b.d || a.seq - b.seq);
    const t: number[] = [0];
    const bytes: number[] = [this.baseBytes];
    let live = this.baseBytes;
    let peakBytes = live;
    for (const c of sorted) {
      live += c.d;
      if (live > peakBytes) peakBytes = live;
      if (t[t.length - 1] === c.t) bytes[bytes.length - 1] = live;
      else {
        t.push(c.t);
        bytes.push(live);
      }
    }
    return { rank: this.rank, t, bytes, peakBytes };
  }
}
