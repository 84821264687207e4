// A trace event on one rank for interval tests: compute and wait on the compute stream, every
// collective on comm:dp, named by kind and start.
import type { EventKind, TraceEvent } from '../../src/trace/event';

export const ev = (rank: number, kind: EventKind, start: number, dur: number): TraceEvent => ({
  rank,
  kind,
  start,
  dur,
  name: `${kind}@${start}`,
  stream: kind === 'compute' || kind === 'wait' ? 'compute' : 'comm:dp',
});
