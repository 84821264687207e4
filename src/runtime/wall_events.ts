// The measured (wall-clock) timeline of a live step: each rank's timed intervals (exec/phases.ts)
// as trace events, µs since that rank's step started. Kernels are `compute` on the compute stream;
// a collective is an all_gather / reduce_scatter on its group's comm stream, spanning its whole
// host call; inside it, the readbacks, uploads and barrier waits the rank spent are their own
// kinds on the compute stream. Everything runs on the rank's one thread, so no two host intervals
// overlap: the timeline shows the overlap this machine really got (none, on CPU kernels).

import type { StepGraph } from '../graph';
import { commStream, type EventKind, type StreamName, type TraceEvent } from '../trace';
import type { PhaseInterval } from './exec';

function collectiveOf(graph: StepGraph): Map<string, { kind: EventKind; group: string }> {
  const out = new Map<string, { kind: EventKind; group: string }>();
  for (const n of graph.nodes) {
    if (n.kind === 'all_gather' || n.kind === 'reduce_scatter')
      out.set(n.name, { kind: n.kind, group: n.collective?.group ?? 'dp' });
  }
  return out;
}

/** Events of one step from each rank's intervals (`perRank[r]` of rank r; missing ranks are skipped). */
export function wallEvents(graph: StepGraph, perRank: readonly (readonly PhaseInterval[] | undefined)[]): TraceEvent[] {
  const colls = collectiveOf(graph);
  const out: TraceEvent[] = [];
  perRank.forEach((intervals, rank) => {
    for (const iv of intervals ?? []) {
      let kind: EventKind = 'compute';
      let stream: StreamName = 'compute';
      if (iv.phase === 'collective') {
        const c = colls.get(iv.name);
        if (c === undefined) continue; // not a collective of this graph: nothing to draw it as
        kind = c.kind;
        stream = commStream(c.group);
      } else if (iv.phase === 'readback' || iv.phase === 'upload' || iv.phase === 'barrier') {
        kind = iv.phase;
      }
      out.push({ rank, stream, name: iv.name, kind, start: iv.startMs * 1000, dur: iv.durMs * 1000 });
    }
  });
  return out.sort((a, b) => a.rank - b.rank || a.start - b.start);
}
