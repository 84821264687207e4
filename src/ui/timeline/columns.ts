// Columnar timeline data: trace events grouped into lanes (rank × stream), sorted by start,
// held in typed arrays so the canvas can draw 100k events per frame without touching objects.
// Also the per-rank "exposed communication" intervals: comm time not covered by compute (HTA).

import type { EventKind, StreamName, TraceEvent } from '../../trace/event';

export const KIND_CODES: readonly EventKind[] = ['compute', 'all_gather', 'reduce_scatter', 'wait'];
const KIND_INDEX: Readonly<Record<EventKind, number>> = { compute: 0, all_gather: 1, reduce_scatter: 2, wait: 3 };

/** Most ranks drawn as lanes; beyond this the timeline says how many it hides. */
export const MAX_RANKS_SHOWN = 8; // 16 lanes per timeline: A and B both fit a 1280×800 screen

export interface Lane {
  readonly rank: number;
  readonly stream: StreamName;
  readonly label: string; // 'r0 compute', 'r0 comm:dp'
}

export interface TimelineColumns {
  readonly lanes: readonly Lane[];
  readonly laneOffset: Uint32Array; // lane i's events are [laneOffset[i], laneOffset[i+1])
  readonly startUs: Float64Array;
  readonly durUs: Float64Array;
  readonly maxEndUs: Float64Array; // running max of end within the lane: binary search for the first visible
  readonly laneMaxDurUs: Float64Array; // per lane, longest event: whole lanes skip label/sub-pixel checks
  readonly kind: Uint8Array; // index into KIND_CODES
  readonly bucket: Int32Array; // bucketId or -1
  readonly eventIndex: Uint32Array; // index into the source events array
  readonly exposedOffset: Uint32Array; // per lane, like laneOffset, into exposedStart/End (comm lanes only)
  readonly exposedStartUs: Float64Array;
  readonly exposedEndUs: Float64Array;
  readonly endUs: number; // last event end over all lanes
  readonly ranksTotal: number;
  readonly ranksShown: number;
}

function streamOrder(s: StreamName): string {
  return s === 'compute' ? '0' : `1${s}`;
}

type Interval = [number, number];

function union(intervals: Interval[]): Interval[] {
  intervals.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: Interval[] = [];
  for (const [s, e] of intervals) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** a − b for two sorted, disjoint interval lists. */
function subtract(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let j = 0;
  for (const [s0, e] of a) {
    let s = s0;
    while (j < b.length && b[j][1] <= s) j++;
    let k = j;
    while (k < b.length && b[k][0] < e) {
      if (b[k][0] > s) out.push([s, b[k][0]]);
      s = Math.max(s, b[k][1]);
      k++;
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}

/** Build lanes and columns from events; `maxRanks` caps the lanes drawn. */
export function buildColumns(events: readonly TraceEvent[], maxRanks = MAX_RANKS_SHOWN): TimelineColumns {
  const ranks = [...new Set(events.map((e) => e.rank))].sort((x, y) => x - y);
  const shown = new Set(ranks.slice(0, maxRanks));
  const laneKeys = new Map<string, Lane>();
  for (const e of events) {
    if (!shown.has(e.rank)) continue;
    const key = `${e.rank}|${e.stream}`;
    if (!laneKeys.has(key)) laneKeys.set(key, { rank: e.rank, stream: e.stream, label: `r${e.rank} ${e.stream}` });
  }
  const lanes = [...laneKeys.values()].sort((x, y) => x.rank - y.rank || streamOrder(x.stream).localeCompare(streamOrder(y.stream)));
  const laneIdx = new Map(lanes.map((l, i) => [`${l.rank}|${l.stream}`, i]));

  const perLane: number[][] = lanes.map(() => []);
  events.forEach((e, i) => {
    const li = laneIdx.get(`${e.rank}|${e.stream}`);
    if (li !== undefined) perLane[li].push(i);
  });
  const n = perLane.reduce((s, l) => s + l.length, 0);
  const laneOffset = new Uint32Array(lanes.length + 1);
  const startUs = new Float64Array(n);
  const durUs = new Float64Array(n);
  const maxEndUs = new Float64Array(n);
  const kind = new Uint8Array(n);
  const bucket = new Int32Array(n);
  const eventIndex = new Uint32Array(n);
  const laneMaxDurUs = new Float64Array(lanes.length);
  let p = 0;
  let endAll = 0;
  perLane.forEach((idxs, li) => {
    idxs.sort((x, y) => events[x].start - events[y].start || x - y); // tie-break: original order
    laneOffset[li] = p;
    let runMax = -Infinity;
    for (const i of idxs) {
      const e = events[i];
      startUs[p] = e.start;
      durUs[p] = Math.max(0, e.dur);
      runMax = Math.max(runMax, e.start + durUs[p]);
      maxEndUs[p] = runMax;
      if (durUs[p] > laneMaxDurUs[li]) laneMaxDurUs[li] = durUs[p];
      kind[p] = KIND_INDEX[e.kind] ?? 0;
      bucket[p] = e.bucketId ?? -1;
      eventIndex[p] = i;
      p++;
    }
    if (runMax > endAll) endAll = runMax;
  });
  laneOffset[lanes.length] = p;

  // exposed comm per rank = U_comm − U_compute (waits are not compute), drawn on that rank's comm lanes
  const byRank = new Map<number, { comm: Interval[]; comp: Interval[] }>();
  for (const e of events) {
    if (!shown.has(e.rank)) continue;
    let r = byRank.get(e.rank);
    if (!r) byRank.set(e.rank, (r = { comm: [], comp: [] }));
    if (e.kind === 'compute') r.comp.push([e.start, e.start + e.dur]);
    else if (e.kind === 'all_gather' || e.kind === 'reduce_scatter') r.comm.push([e.start, e.start + e.dur]);
  }
  const exposedByRank = new Map<number, Interval[]>();
  for (const [rank, r] of byRank) exposedByRank.set(rank, subtract(union(r.comm), union(r.comp)));
  const exposedOffset = new Uint32Array(lanes.length + 1);
  const ex: Interval[] = [];
  lanes.forEach((l, li) => {
    exposedOffset[li] = ex.length;
    if (l.stream !== 'compute') ex.push(...(exposedByRank.get(l.rank) ?? []));
  });
  exposedOffset[lanes.length] = ex.length;

  return {
    lanes, laneOffset, startUs, durUs, maxEndUs, laneMaxDurUs, kind, bucket, eventIndex, exposedOffset,
    exposedStartUs: Float64Array.from(ex, (x) => x[0]),
    exposedEndUs: Float64Array.from(ex, (x) => x[1]),
    endUs: endAll,
    ranksTotal: ranks.length,
    ranksShown: shown.size,
  };
}

/** First position in lane li whose event may be visible at time t (maxEnd > t). */
export function firstVisible(c: TimelineColumns, li: number, tUs: number): number {
  let lo = c.laneOffset[li];
  let hi = c.laneOffset[li + 1];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (c.maxEndUs[mid] <= tUs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First position at or after `from` (below `end`) whose start is ≥ tUs: galloping then binary search. */
export function nextStartAtOrAfter(c: TimelineColumns, from: number, end: number, tUs: number): number {
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < end && c.startUs[hi] < tUs) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > end) hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (c.startUs[mid] < tUs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First exposed interval of lane li that ends after tUs (intervals are sorted and disjoint). */
export function firstExposed(c: TimelineColumns, li: number, tUs: number): number {
  let lo = c.exposedOffset[li];
  let hi = c.exposedOffset[li + 1];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (c.exposedEndUs[mid] < tUs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The event (source index) under time t in lane li, within a tolerance of tolUs; -1 when none. */
export function hitTest(c: TimelineColumns, li: number, tUs: number, tolUs: number): number {
  if (li < 0 || li >= c.lanes.length) return -1;
  let best = -1;
  let bestDist = Infinity;
  for (let p = firstVisible(c, li, tUs - tolUs); p < c.laneOffset[li + 1] && c.startUs[p] <= tUs + tolUs; p++) {
    const s = c.startUs[p];
    const e = s + c.durUs[p];
    const dist = tUs < s ? s - tUs : tUs > e ? tUs - e : 0;
    if (dist <= tolUs && (dist < bestDist || (dist === bestDist && c.durUs[p] < c.durUs[best]))) {
      best = p;
      bestDist = dist;
    }
  }
  return best < 0 ? -1 : c.eventIndex[best];
}
