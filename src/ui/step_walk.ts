// The step-through's data: one transformer block's ops on rank 0's compute stream (its forward
// and backward, casts and waits included, bucket waits attributed through their members), and
// for each op the collectives in flight and the memory held when it starts. Read from the real
// schedule's trace events, so the walk shows what the simulator ran, not a drawing of it.

import type { MemoryCurve, TraceEvent } from '../trace';
import { baseName } from './reason_lookup';

export interface WalkStep {
  readonly eventIndex: number;
  readonly name: string;
  readonly kind: TraceEvent['kind'];
  /** The node's op ('matmul', 'cast', 'copy' for a bucket's copies, 'wait_tensor', ...). */
  readonly op?: string;
  readonly phase: 'forward' | 'backward' | 'optimizer';
  readonly startUs: number;
  readonly durUs: number;
  /** Collectives running on rank 0 while this op starts. */
  readonly inFlight: readonly { readonly name: string; readonly kind: TraceEvent['kind'] }[];
  /** Bytes rank 0 holds when the op starts (NaN without a memory curve). */
  readonly memoryBytes: number;
}

const BLOCK_RE = /^layers\.(\d+)\./;
/** The backward starts with the loss's gradient (src/graph/backward.ts names it 'loss.bwd'). */
const BACKWARD_START = 'loss.bwd';
const OPTIMIZER_RE = /\.(adamw|sgd)$/; // the optimizer's per-parameter updates close the step

function phaseOf(e: TraceEvent, bwdUs: number): WalkStep['phase'] {
  if (OPTIMIZER_RE.test(e.name)) return 'optimizer';
  return e.start >= bwdUs ? 'backward' : 'forward';
}

/** Block indices present in the events ('layers.<k>.…'), ascending. */
export function blocksOf(events: readonly TraceEvent[]): number[] {
  const ks = new Set<number>();
  for (const e of events) {
    const m = e.rank === 0 ? BLOCK_RE.exec(e.name) : null;
    if (m) ks.add(Number(m[1]));
  }
  return [...ks].sort((a, b) => a - b);
}

/** Bytes held at time t on one rank's curve: the last change at or before t. */
export function memoryAt(curve: MemoryCurve | undefined, tUs: number): number {
  if (!curve || curve.t.length === 0) return NaN;
  let lo = 0;
  let hi = curve.t.length - 1;
  if (tUs < curve.t[0]) return curve.bytes[0];
  while (lo < hi) {
    // last index with t[i] <= tUs
    const mid = (lo + hi + 1) >> 1;
    if (curve.t[mid] <= tUs) lo = mid;
    else hi = mid - 1;
  }
  return curve.bytes[lo];
}

/** Whether a compute-stream event belongs to block k: by name, or (a bucket's wait) by its collective's params. */
function inBlock(e: TraceEvent, prefix: string, waitParams: ReadonlyMap<string, readonly string[]>): boolean {
  if (e.name.startsWith(prefix)) return true;
  if (e.kind !== 'wait') return false;
  return (waitParams.get(baseName(e.name)) ?? []).some((p) => p.startsWith(prefix));
}

/** The walk through block k on rank 0: its ops in time order, each with what is in flight and the memory held. */
export function walkBlock(events: readonly TraceEvent[], memory: readonly MemoryCurve[], k: number): WalkStep[] {
  const prefix = `layers.${k}.`;
  const comm = events.filter((e) => e.rank === 0 && e.stream !== 'compute');
  const waitParams = new Map<string, readonly string[]>();
  for (const c of comm) waitParams.set(c.name.replace(/\.(all_gather|reduce_scatter)$/, ''), c.params ?? []);
  const curve = memory.find((m) => m.rank === 0) ?? memory[0];
  const steps: WalkStep[] = [];
  const bwd = events.find((e) => e.rank === 0 && e.name === BACKWARD_START);
  const bwdUs = bwd ? bwd.start : Infinity; // no loss node (an imported graph): all forward
  events.forEach((e, i) => {
    if (e.rank !== 0 || e.stream !== 'compute' || !inBlock(e, prefix, waitParams)) return;
    steps.push({
      eventIndex: i,
      name: e.name,
      kind: e.kind,
      op: e.op,
      phase: phaseOf(e, bwdUs),
      startUs: e.start,
      durUs: e.dur,
      inFlight: comm
        .filter((c) => c.start <= e.start && c.start + c.dur > e.start)
        .map((c) => ({ name: c.name, kind: c.kind })),
      memoryBytes: memoryAt(curve, e.start),
    });
  });
  return steps.sort((a, b) => a.startUs - b.startUs || a.eventIndex - b.eventIndex);
}

/**
 * What an op computes, the same under every schedule: the step graph's compute node it runs (its name);
 * null for what a schedule adds around them (waits, a bucket's copies).
 */
export function opIdentity(s: Pick<WalkStep, 'kind' | 'name' | 'op'>): string | null {
  return s.kind === 'compute' && s.op !== 'copy' ? s.name : null;
}

/** One step of the walk: the same op on both sides, by its index in each side's walk (-1: that side lacks it). */
export interface WalkPair {
  readonly name: string;
  readonly a: number;
  readonly b: number;
}

/**
 * The walk's steps: A's and B's walks paired by what each op computes (opIdentity), not by position,
 * since the schedules order the ops differently and add different waits and copies. In A's order; an
 * op only B runs comes after the step of B's op before it.
 */
export function pairWalks(a: readonly WalkStep[], b: readonly WalkStep[]): WalkPair[] {
  const inB = new Map<string, number[]>();
  b.forEach((s, j) => {
    const id = opIdentity(s);
    if (id !== null) inB.set(id, [...(inB.get(id) ?? []), j]);
  });
  const pairs: WalkPair[] = [];
  a.forEach((s, i) => {
    const id = opIdentity(s);
    if (id !== null) pairs.push({ name: id, a: i, b: inB.get(id)?.shift() ?? -1 });
  });
  const taken = new Set(pairs.map((p) => p.b));
  b.forEach((s, j) => {
    const id = opIdentity(s);
    if (id === null || taken.has(j)) return;
    let at = 0; // after the last step whose B op runs before this one
    pairs.forEach((p, k) => {
      if (p.b >= 0 && p.b < j) at = k + 1;
    });
    pairs.splice(at, 0, { name: id, a: -1, b: j });
  });
  return pairs;
}

/** The ops a side runs just before step i of its walk that compute nothing (waits, a bucket's copies). */
export function leadIn(steps: readonly WalkStep[], i: number): WalkStep[] {
  let k = i;
  while (k > 0 && opIdentity(steps[k - 1]) === null) k--;
  return steps.slice(k, i);
}

/** Margin around the ops a followed window holds: PAD_DURS of the longer op each side, at least 16 µs. */
const FOLLOW_PAD_DURS = 1.5;
const FOLLOW_MIN_PAD_US = 16;

/** What the timelines show while the walk follows its current op: the shared window, and B's shift. */
export interface FollowView {
  readonly window: { readonly startUs: number; readonly endUs: number };
  /** How far B's timeline is drawn after the shared window (µs): 0 when one window holds both ops readably. */
  readonly shiftUs: number;
}

/**
 * The view that keeps A's and B's current op (the same op of the step graph) whole and readable: one
 * window a few op lengths wide around both when they lie close; when they lie far apart (B finishes its
 * step earlier, so by block 0's backward they are ~100 ms apart on llama3-8b), a window around A's op and
 * B's timeline shifted by the distance between the two, so each timeline shows its own op at the same
 * zoom. Null when there is no op.
 */
export function followWindow(a: WalkStep | undefined, b: WalkStep | undefined): FollowView | null {
  const at = [a, b].filter((s): s is WalkStep => s !== undefined);
  if (at.length === 0) return null;
  const longest = Math.max(...at.map((s) => s.durUs));
  const pad = Math.max(FOLLOW_MIN_PAD_US, FOLLOW_PAD_DURS * longest);
  const alone = longest + 2 * pad; // the window one op would get
  const lo = Math.min(...at.map((s) => s.startUs));
  const hi = Math.max(...at.map((s) => s.startUs + s.durUs));
  if (hi - lo + 2 * pad <= 2 * alone || !a || !b) return { window: { startUs: lo - pad, endUs: hi + pad }, shiftUs: 0 };
  return { window: { startUs: a.startUs - pad, endUs: a.startUs + longest + pad }, shiftUs: b.startUs - a.startUs };
}
