// Trace events: what the simulator and the live runtime both emit, and what metrics, export and
// the timeline read. Times are µs everywhere, said by the name wherever a time leaves an event
// (`stepUs`, `exposedCommUs`); conversions to ms happen only where text is printed.

import type { CommKind } from './kinds';

export type EventKind =
  | 'compute' // a kernel on the compute stream (includes optimizer, cast)
  | CommKind // a collective running on a comm stream
  | 'memory' // memcpy / memset (imported traces): non-compute GPU time, as HTA counts it
  | 'sync' // CUDA sync events (imported traces): non-compute GPU time
  | 'wait' // compute stream blocked on a collective (exposed communication)
  | LiveHostKind; // live mode, measured: the rank's host-side time (readback, upload, barrier wait)

/** Live mode's host-side phases drawn as their own kinds on the measured (wall-clock) timeline. */
type LiveHostKind = 'readback' | 'upload' | 'barrier';

/**
 * Stream names: 'compute', 'comm:<group>' (one NCCL stream per process group), or 'side:<name>': a
 * stream of its own for non-collective kernels a backend takes off the compute stream (FSDP2's
 * all-gather copy-in stream).
 */
export type StreamName = 'compute' | `side:${string}` | `comm:${string}`;

export interface TraceEvent {
  readonly rank: number;
  readonly stream: StreamName;
  readonly name: string; // node name (a bucket's merged node name for bucketed collectives)
  readonly kind: EventKind;
  readonly start: number; // µs
  readonly dur: number; // µs
  readonly bucketId?: number;
  readonly params?: readonly string[];
  readonly bytes?: number;
  readonly op?: string;
  /** ProfilerStep#N whose CPU work launched this kernel (imported Kineto traces). */
  readonly iteration?: number;
}

/** Memory over time for one rank: live bytes after each change, times ascending (µs). */
export interface MemoryCurve {
  readonly rank: number;
  readonly t: readonly number[];
  readonly bytes: readonly number[];
  readonly peakBytes: number;
}
