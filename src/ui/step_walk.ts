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
  while (lo < hi) { // last index with t[i] <= tUs
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
      eventIndex: i, name: e.name, kind: e.kind, phase: phaseOf(e, bwdUs), startUs: e.start, durUs: e.dur,
      inFlight: comm
        .filter((c) => c.start <= e.start && c.start + c.dur > e.start)
        .map((c) => ({ name: c.name, kind: c.kind })),
      memoryBytes: memoryAt(curve, e.start),
    });
  });
  return steps.sort((a, b) => a.startUs - b.startUs || a.eventIndex - b.eventIndex);
}

/** Margin around the ops a followed window holds: a few op lengths, at least 20 µs. */
const FOLLOW_PAD_DURS = 4;
const FOLLOW_MIN_PAD_US = 20;

/**
 * The timeline window that shows every given op whole (A's and B's current ones, which may lie far
 * apart: B starts its collectives earlier), with a margin; null when there is none.
 */
export function followWindow(ops: readonly (WalkStep | undefined)[]): { startUs: number; endUs: number } | null {
  const at = ops.filter((s): s is WalkStep => s !== undefined);
  if (at.length === 0) return null;
  const lo = Math.min(...at.map((s) => s.startUs));
  const hi = Math.max(...at.map((s) => s.startUs + s.durUs));
  const pad = Math.max(FOLLOW_MIN_PAD_US, FOLLOW_PAD_DURS * Math.max(...at.map((s) => s.durUs)), (hi - lo) * 0.1);
  return { startUs: lo - pad, endUs: hi + pad };
}
