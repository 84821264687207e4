// A trace event on one rank for interval and timeline tests: on a given stream (evOn), or with
// compute and wait on the compute stream and every collective on comm:dp (ev); named by kind and start.
import type { EventKind, TraceEvent } from '../../src/trace/event';

/** A trace event on `stream`, named by kind and start unless `name` is given. */
export const evOn = (
  rank: number,
  stream: TraceEvent['stream'],
  kind: EventKind,
  start: number,
  dur: number,
  name = `${kind}@${start}`,
): TraceEvent => ({ rank, kind, start, dur, name, stream });

export const ev = (rank: number, kind: EventKind, start: number, dur: number): TraceEvent =>
  evOn(rank, kind === 'compute' || kind === 'wait' ? 'compute' : 'comm:dp', kind, start, dur);
