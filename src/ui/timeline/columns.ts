// Columnar timeline data: trace events grouped into lanes (rank × stream), sorted by start,
// held in typed arrays so the canvas can draw 100k events per frame without touching objects.
// Also the per-rank "exposed communication" intervals: comm time not covered by compute (HTA).

import { bisectLeft, bisectRight } from 'd3';
import { isCommKind, isCommStream, streamOf, type EventKind, type StreamName, type TraceEvent } from '../../trace';

// kinds of imported traces appended after the first four, so their codes keep their meaning
export const KIND_CODES: readonly EventKind[] = [
  'compute', 'all_gather', 'reduce_scatter', 'wait',
  'all_reduce', 'send_recv', 'broadcast', 'all_to_all', 'memory', 'sync',
  'readback', 'upload', 'barrier', // live mode's measured timeline (runtime/wall_events.ts)
];
const KIND_INDEX = Object.fromEntries(KIND_CODES.map((k, i) => [k, i])) as Readonly<Record<EventKind, number>>;
const COMPUTE = KIND_INDEX.compute;
const IS_COMM = KIND_CODES.map((k) => isCommKind(k));

/** Positions per blockMaxDurUs entry (a power of two). */
const DUR_BLOCK = 16;
const DUR_BLOCK_SHIFT = Math.log2(DUR_BLOCK);

/** Most ranks drawn as lanes; beyond this the timeline says how many it hides. */
const MAX_RANKS_SHOWN = 8; // 16 lanes per timeline: A and B both fit a 1280×800 screen

interface Lane {
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
  // longest event in positions [k·DUR_BLOCK, (k+1)·DUR_BLOCK): skips runs of short events
  readonly blockMaxDurUs: Float64Array;
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
  const kind = streamOf(s).kind;
  return kind === 'compute' ? '0' : `${kind === 'side' ? 1 : 2}${s}`; // side streams beside compute
}

/**
 * Union of intervals given flat as [s0, e0, s1, e1, …] (sorted by start first when they are not),
 * flat and disjoint.
 */
function union(flat: readonly number[]): number[] {
  const n = flat.length >> 1;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = flat[2 * i] >= flat[2 * i - 2];
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (!sorted) order.sort((x, y) => flat[2 * x] - flat[2 * y] || x - y);
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const s = flat[2 * order[k]];
    const e = flat[2 * order[k] + 1];
    if (out.length > 0 && s <= out[out.length - 1]) out[out.length - 1] = Math.max(out[out.length - 1], e);
    else out.push(s, e);
  }
  return out;
}

/** a − b for two sorted, disjoint, flat interval lists. */
function subtract(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  const nb = b.length >> 1;
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let s = a[i];
    const e = a[i + 1];
    while (j < nb && b[2 * j + 1] <= s) j++;
    for (let k = j; k < nb && b[2 * k] < e; k++) {
      if (b[2 * k] > s) out.push(s, b[2 * k]);
      s = Math.max(s, b[2 * k + 1]);
    }
    if (s < e) out.push(s, e);
  }
  return out;
}

/** Lanes of the shown ranks (by rank, compute first, side streams beside it), each event's lane (-1: hidden). */
function findLanes(events: readonly TraceEvent[], shown: ReadonlySet<number>): { lanes: Lane[]; laneOf: Int32Array } {
  // lanes in first-seen order (rank → stream → id), then sorted; no string key per event
  const seen = new Map<number, Map<StreamName, number>>();
  const found: Lane[] = [];
  const seenLane = new Int32Array(events.length).fill(-1);
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (!shown.has(e.rank)) continue;
    let byStream = seen.get(e.rank);
    if (!byStream) seen.set(e.rank, (byStream = new Map()));
    let id = byStream.get(e.stream);
    if (id === undefined) {
      byStream.set(e.stream, (id = found.length));
      found.push({ rank: e.rank, stream: e.stream, label: `r${e.rank} ${e.stream}` });
    }
    seenLane[i] = id;
  }
  const byOrder = (x: number, y: number) =>
    found[x].rank - found[y].rank || streamOrder(found[x].stream).localeCompare(streamOrder(found[y].stream));
  const sortedIds = found.map((_, id) => id).sort(byOrder);
  const laneOfId = new Int32Array(found.length);
  sortedIds.forEach((id, li) => (laneOfId[id] = li));
  const laneOf = seenLane.map((id) => (id >= 0 ? laneOfId[id] : -1));
  return { lanes: sortedIds.map((id) => found[id]), laneOf };
}

/** Counting sort of event indices by lane (original order within a lane). */
function groupByLane(laneOf: Int32Array, nLanes: number): { laneOffset: Uint32Array; eventIndex: Uint32Array } {
  const laneOffset = new Uint32Array(nLanes + 1);
  for (let i = 0; i < laneOf.length; i++) if (laneOf[i] >= 0) laneOffset[laneOf[i] + 1]++;
  for (let li = 0; li < nLanes; li++) laneOffset[li + 1] += laneOffset[li];
  const eventIndex = new Uint32Array(laneOffset[nLanes]);
  const fill = laneOffset.slice(0, nLanes);
  for (let i = 0; i < laneOf.length; i++) if (laneOf[i] >= 0) eventIndex[fill[laneOf[i]]++] = i;
  return { laneOffset, eventIndex };
}

type EventColumns = Pick<TimelineColumns, 'startUs' | 'durUs' | 'maxEndUs' | 'laneMaxDurUs' | 'kind' | 'bucket'>;

/** Sort each lane by start (in place in eventIndex), then copy the events' fields into columns. */
function fillColumns(
  events: readonly TraceEvent[], laneOffset: Uint32Array, eventIndex: Uint32Array,
): EventColumns & { endUs: number } {
  const n = eventIndex.length;
  const lanes = laneOffset.length - 1;
  const c = {
    startUs: new Float64Array(n), durUs: new Float64Array(n), maxEndUs: new Float64Array(n),
    kind: new Uint8Array(n), bucket: new Int32Array(n), laneMaxDurUs: new Float64Array(lanes),
  };
  let endAll = 0;
  for (let li = 0; li < lanes; li++) {
    const a = laneOffset[li];
    const b = laneOffset[li + 1];
    let sorted = true;
    for (let p = a + 1; p < b && sorted; p++) sorted = events[eventIndex[p]].start >= events[eventIndex[p - 1]].start;
    // tie-break: original order
    if (!sorted) eventIndex.subarray(a, b).sort((x, y) => events[x].start - events[y].start || x - y);
    let runMax = -Infinity;
    for (let p = a; p < b; p++) {
      const e = events[eventIndex[p]];
      const dur = Math.max(0, e.dur);
      c.startUs[p] = e.start;
      c.durUs[p] = dur;
      runMax = Math.max(runMax, e.start + dur);
      c.maxEndUs[p] = runMax;
      if (dur > c.laneMaxDurUs[li]) c.laneMaxDurUs[li] = dur;
      c.kind[p] = KIND_INDEX[e.kind] ?? 0;
      c.bucket[p] = e.bucketId ?? -1;
    }
    if (runMax > endAll) endAll = runMax;
  }
  return { ...c, endUs: endAll };
}

function blockMaxDur(durUs: Float64Array): Float64Array {
  const out = new Float64Array(Math.ceil(durUs.length / DUR_BLOCK));
  for (let p = 0; p < durUs.length; p++) {
    const k = p >> DUR_BLOCK_SHIFT;
    if (durUs[p] > out[k]) out[k] = durUs[p];
  }
  return out;
}

type ExposedColumns = Pick<TimelineColumns, 'exposedOffset' | 'exposedStartUs' | 'exposedEndUs'>;

/** Exposed comm per rank = U_comm − U_compute (waits are not compute), drawn on that rank's comm lanes. */
function exposedColumns(lanes: readonly Lane[], laneOffset: Uint32Array, c: EventColumns): ExposedColumns {
  const byRank = new Map<number, { comm: number[]; comp: number[] }>();
  for (let li = 0; li < lanes.length; li++) {
    let r = byRank.get(lanes[li].rank);
    if (!r) byRank.set(lanes[li].rank, (r = { comm: [], comp: [] }));
    for (let p = laneOffset[li]; p < laneOffset[li + 1]; p++) {
      const k = c.kind[p];
      const to = k === COMPUTE ? r.comp : IS_COMM[k] ? r.comm : null;
      to?.push(c.startUs[p], c.startUs[p] + c.durUs[p]);
    }
  }
  const exposedByRank = new Map<number, number[]>(); // flat [s, e, …]
  for (const [rank, r] of byRank) exposedByRank.set(rank, subtract(union(r.comm), union(r.comp)));
  const exposedOffset = new Uint32Array(lanes.length + 1);
  let exN = 0;
  lanes.forEach((l, li) => {
    exposedOffset[li] = exN;
    if (isCommStream(l.stream)) exN += (exposedByRank.get(l.rank)?.length ?? 0) >> 1;
  });
  exposedOffset[lanes.length] = exN;
  const exposedStartUs = new Float64Array(exN);
  const exposedEndUs = new Float64Array(exN);
  lanes.forEach((l, li) => {
    if (!isCommStream(l.stream)) return;
    const flat = exposedByRank.get(l.rank) ?? [];
    for (let i = 0, k = exposedOffset[li]; i < flat.length; i += 2, k++) {
      exposedStartUs[k] = flat[i];
      exposedEndUs[k] = flat[i + 1];
    }
  });
  return { exposedOffset, exposedStartUs, exposedEndUs };
}

/** Build lanes and columns from events; `maxRanks` caps the lanes drawn. */
export function buildColumns(events: readonly TraceEvent[], maxRanks = MAX_RANKS_SHOWN): TimelineColumns {
  const rankSet = new Set<number>();
  for (let i = 0; i < events.length; i++) rankSet.add(events[i].rank);
  const ranks = [...rankSet].sort((x, y) => x - y);
  const shown = new Set(ranks.slice(0, maxRanks));
  const { lanes, laneOf } = findLanes(events, shown);
  const { laneOffset, eventIndex } = groupByLane(laneOf, lanes.length);
  const { endUs, ...cols } = fillColumns(events, laneOffset, eventIndex);
  return {
    lanes, laneOffset, eventIndex, ...cols,
    blockMaxDurUs: blockMaxDur(cols.durUs),
    ...exposedColumns(lanes, laneOffset, cols),
    endUs,
    ranksTotal: ranks.length,
    ranksShown: shown.size,
  };
}

/** First position in lane li whose event may be visible at time t (maxEnd > t). */
export function firstVisible(c: TimelineColumns, li: number, tUs: number): number {
  return bisectRight(c.maxEndUs, tUs, c.laneOffset[li], c.laneOffset[li + 1]);
}

/**
 * First index in [from, end) of an ascending array whose value is ≥ t (end when none): galloping
 * then binary search.
 */
export function gallopAtOrAfter(values: Float64Array, from: number, end: number, t: number): number {
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < end && values[hi] < t) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  return bisectLeft(values, t, lo, Math.min(hi, end));
}

/** First position at or after `from` (below `end`) whose start is ≥ tUs. */
export function nextStartAtOrAfter(c: TimelineColumns, from: number, end: number, tUs: number): number {
  return gallopAtOrAfter(c.startUs, from, end, tUs);
}

/**
 * First position at or after `from` (below `end`) whose start is ≥ tUs or whose duration is ≥ durUs:
 * the events before it are all shorter than durUs and start before tUs. Whole DUR_BLOCK blocks of
 * short events are stepped over at once.
 */
export function nextStartOrLong(c: TimelineColumns, from: number, end: number, tUs: number, durUs: number): number {
  let q = from;
  while (q < end) {
    if ((q & (DUR_BLOCK - 1)) === 0 && q + DUR_BLOCK <= end && c.blockMaxDurUs[q >> DUR_BLOCK_SHIFT] < durUs) {
      if (c.startUs[q + DUR_BLOCK - 1] < tUs) {
        q += DUR_BLOCK;
        continue;
      }
      return nextStartAtOrAfter(c, q, q + DUR_BLOCK, tUs); // every event in the block is short
    }
    if (c.startUs[q] >= tUs || c.durUs[q] >= durUs) return q;
    q++;
  }
  return q;
}

/** First exposed interval of lane li that ends after tUs (intervals are sorted and disjoint). */
export function firstExposed(c: TimelineColumns, li: number, tUs: number): number {
  return bisectLeft(c.exposedEndUs, tUs, c.exposedOffset[li], c.exposedOffset[li + 1]);
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
