// Which ranks run the same schedule, decided from the data: two ranks are alike when each of
// their streams holds the same events (kind, name, start, duration, bucket) in the same order.
// A timeline draws alike ranks once, as one lane set standing for all of them (columns.ts).

import type { TraceEvent } from '../../trace';

/** Each rank's events, per stream, in (start, name) order: what "the same schedule" compares. */
function byRankStream(events: readonly TraceEvent[]): Map<number, Map<string, TraceEvent[]>> {
  const out = new Map<number, Map<string, TraceEvent[]>>();
  for (const e of events) {
    let streams = out.get(e.rank);
    if (!streams) out.set(e.rank, (streams = new Map()));
    let list = streams.get(e.stream);
    if (!list) streams.set(e.stream, (list = []));
    list.push(e);
  }
  return out;
}

const byStartName = (x: TraceEvent, y: TraceEvent) =>
  x.start - y.start || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);

/** Same streams with as many events each: checked before sorting anything. */
function sameShape(a: Map<string, TraceEvent[]>, b: Map<string, TraceEvent[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [stream, xs] of a) if (b.get(stream)?.length !== xs.length) return false;
  return true;
}

const sameEvent = (x: TraceEvent, y: TraceEvent): boolean =>
  x.kind === y.kind && x.name === y.name && x.start === y.start && x.dur === y.dur && x.bucketId === y.bucketId;

/** Same events stream by stream (lists sorted by start, name). */
function sameSchedule(a: Map<string, TraceEvent[]>, b: Map<string, TraceEvent[]>): boolean {
  for (const [stream, xs] of a) {
    const ys = b.get(stream)!;
    for (let i = 0; i < xs.length; i++) if (!sameEvent(xs[i], ys[i])) return false;
  }
  return true;
}

export interface RankLikeness {
  /** The ranks that have events, ascending. */
  readonly ranks: readonly number[];
  /** Every rank's events equal the first rank's, stream by stream (true for one rank or none). */
  readonly alike: boolean;
}

/** The ranks of a trace and whether they all run the same events (jitter, a straggler, a hang: not alike). */
export function rankLikeness(events: readonly TraceEvent[]): RankLikeness {
  const per = byRankStream(events);
  const ranks = [...per.keys()].sort((x, y) => x - y);
  if (ranks.length <= 1) return { ranks, alike: true };
  const first = per.get(ranks[0])!;
  if (!ranks.every((r) => sameShape(first, per.get(r)!))) return { ranks, alike: false };
  for (const streams of per.values()) for (const list of streams.values()) list.sort(byStartName);
  return { ranks, alike: ranks.every((r) => r === ranks[0] || sameSchedule(first, per.get(r)!)) };
}

/** 'r0–r7' for a run of ranks, 'r3' for one, 'r0, r2, r5' otherwise. */
export function rankRangeText(ranks: readonly number[]): string {
  if (ranks.length === 1) return `r${ranks[0]}`;
  const contiguous = ranks.every((r, i) => i === 0 || r === ranks[i - 1] + 1);
  return contiguous ? `r${ranks[0]}–r${ranks[ranks.length - 1]}` : ranks.map((r) => `r${r}`).join(', ');
}
