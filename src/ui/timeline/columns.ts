// Columnar timeline data: trace events grouped into lanes (rank × stream), sorted by start,
// held in typed arrays so the canvas can draw 100k events per frame without touching objects.
// Also the "exposed communication" intervals: comm time not covered by compute (HTA), on each comm
// lane where its own collectives run, and the part of each wait under them, from the metrics' own
// sets (trace rankTimeSets). Ranks whose events are all alike (rank_groups.ts) can be folded into
// one lane set standing for all.

import { bisectLeft, bisectRight } from 'd3';
import {
  exposedIntervals,
  intersect,
  isCommStream,
  rankTimeSets,
  streamOf,
  union,
  waitSplit,
  type EventKind,
  type Interval,
  type StreamName,
  type TraceEvent,
} from '../../trace';
import { rankLikeness, rankRangeText } from './rank_groups';

// kinds of imported traces appended after the first four, so their codes keep their meaning
export const KIND_CODES: readonly EventKind[] = [
  'compute',
  'all_gather',
  'reduce_scatter',
  'wait',
  'all_reduce',
  'send_recv',
  'broadcast',
  'all_to_all',
  'memory',
  'sync',
  'readback',
  'upload',
  'barrier', // live mode's measured timeline (runtime/wall_events.ts)
];
const KIND_INDEX = Object.fromEntries(KIND_CODES.map((k, i) => [k, i])) as Readonly<Record<EventKind, number>>;

/** Positions per blockMaxDurUs entry (a power of two). */
const DUR_BLOCK = 16;
const DUR_BLOCK_SHIFT = Math.log2(DUR_BLOCK);

/** Most ranks drawn as lanes; beyond this the timeline says how many it hides. */
const MAX_RANKS_SHOWN = 8; // 16 lanes per timeline: A and B both fit a 1280×800 screen

interface Lane {
  readonly rank: number; // the rank whose events the lane draws
  readonly stream: StreamName;
  readonly label: string; // 'r0 compute', 'r0 comm:dp'; folded: 'r0–r7 compute'
  /** The ranks the lane stands for: [rank], or every alike rank when folded. */
  readonly ranks: readonly number[];
}

/** Per lane, sorted disjoint intervals: lane i's are [offset[i], offset[i+1]) of startUs/endUs. */
export interface LaneIntervals {
  readonly offset: Uint32Array;
  readonly startUs: Float64Array;
  readonly endUs: Float64Array;
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
  /** Per compute lane, the part of its waits under exposed communication (drawn red; the rest: a late peer). */
  readonly waitExposed: LaneIntervals;
  readonly endUs: number; // last event end over all lanes
  readonly ranksTotal: number;
  readonly ranksShown: number; // ranks drawn or stood for by a drawn lane
  /** Every rank's events are alike (rank_groups.ts), so the lanes may be folded. */
  readonly alike: boolean;
  /** The lanes stand for all alike ranks, drawn once. */
  readonly folded: boolean;
}

function streamOrder(s: StreamName): string {
  const kind = streamOf(s).kind;
  return kind === 'compute' ? '0' : `${kind === 'side' ? 1 : 2}${s}`; // side streams beside compute
}

/** Lanes of the shown ranks (by rank, compute first, side streams beside it), each event's lane (-1: hidden). */
function findLanes(
  events: readonly TraceEvent[],
  shown: ReadonlySet<number>,
  standFor?: readonly number[],
): { lanes: Lane[]; laneOf: Int32Array } {
  const who = (rank: number) => (standFor ? rankRangeText(standFor) : `r${rank}`);
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
      found.push({ rank: e.rank, stream: e.stream, label: `${who(e.rank)} ${e.stream}`, ranks: standFor ?? [e.rank] });
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
  events: readonly TraceEvent[],
  laneOffset: Uint32Array,
  eventIndex: Uint32Array,
): EventColumns & { endUs: number } {
  const n = eventIndex.length;
  const lanes = laneOffset.length - 1;
  const c = {
    startUs: new Float64Array(n),
    durUs: new Float64Array(n),
    maxEndUs: new Float64Array(n),
    kind: new Uint8Array(n),
    bucket: new Int32Array(n),
    laneMaxDurUs: new Float64Array(lanes),
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

type ExposedColumns = Pick<TimelineColumns, 'exposedOffset' | 'exposedStartUs' | 'exposedEndUs' | 'waitExposed'>;

/** Flat per-lane interval columns from each lane's list (lanes without one get none). */
function laneIntervals(nLanes: number, listOf: (li: number) => readonly Interval[] | undefined): LaneIntervals {
  const offset = new Uint32Array(nLanes + 1);
  for (let li = 0; li < nLanes; li++) offset[li + 1] = offset[li] + (listOf(li)?.length ?? 0);
  const startUs = new Float64Array(offset[nLanes]);
  const endUs = new Float64Array(offset[nLanes]);
  for (let li = 0; li < nLanes; li++) {
    (listOf(li) ?? []).forEach(([s, e], i) => {
      startUs[offset[li] + i] = s;
      endUs[offset[li] + i] = e;
    });
  }
  return { offset, startUs, endUs };
}

/** Per comm lane, the union of its events' intervals (undefined on other lanes). */
function commLaneBusy(lanes: readonly Lane[], events: readonly TraceEvent[], laneOf: Int32Array): Interval[][] {
  const busy: Interval[][] = lanes.map(() => []);
  events.forEach((e, i) => {
    const li = laneOf[i];
    if (li >= 0 && isCommStream(lanes[li].stream)) busy[li].push([e.start, e.start + e.dur]);
  });
  return busy.map((ivs) => union(ivs));
}

/**
 * Exposed comm per rank = U_comm − U_comp (waits are not compute), drawn on each comm lane where
 * that lane's own collectives run (on a mesh the dp, ep and efsdp lanes each show their group's
 * share, as exposedCommByGroup counts it); the part of its waits under it, on its compute lane.
 * Both from the metrics' sets (trace/metrics.ts).
 */
function exposedColumns(lanes: readonly Lane[], events: readonly TraceEvent[], laneOf: Int32Array): ExposedColumns {
  const byRank = new Map<number, TraceEvent[]>();
  for (const l of lanes) byRank.set(l.rank, []);
  for (const e of events) byRank.get(e.rank)?.push(e);
  const sets = new Map([...byRank].map(([rank, evs]) => [rank, rankTimeSets(rank, evs)] as const));
  const exposed = new Map([...sets].map(([rank, t]) => [rank, exposedIntervals(t)] as const));
  const waitRed = new Map([...sets].map(([rank, t]) => [rank, waitSplit(t).exposed] as const));
  const busy = commLaneBusy(lanes, events, laneOf);
  const ex = laneIntervals(lanes.length, (li) =>
    isCommStream(lanes[li].stream) ? intersect(exposed.get(lanes[li].rank) ?? [], busy[li]) : undefined,
  );
  const waitExposed = laneIntervals(lanes.length, (li) =>
    streamOf(lanes[li].stream).kind === 'compute' ? waitRed.get(lanes[li].rank) : undefined,
  );
  return { exposedOffset: ex.offset, exposedStartUs: ex.startUs, exposedEndUs: ex.endUs, waitExposed };
}

/**
 * Build lanes and columns from events; `maxRanks` caps the ranks drawn. `fold`: when every rank's
 * events are alike, draw the first rank's lanes once, standing for all of them (`worldSize`: for
 * the whole world, when the simulation emitted some ranks of a symmetric run, each a copy of one).
 */
export function buildColumns(
  events: readonly TraceEvent[],
  maxRanks = MAX_RANKS_SHOWN,
  fold: { readonly worldSize?: number } | null = null,
): TimelineColumns {
  const { ranks, alike } = rankLikeness(events);
  const folded = fold !== null && alike && Math.max(ranks.length, fold.worldSize ?? 0) > 1;
  const shown = new Set(folded ? ranks.slice(0, 1) : ranks.slice(0, maxRanks));
  // folded: the lanes stand for the alike ranks; a symmetric simulation's world when the caller says so
  const worldSize = fold?.worldSize ?? 0;
  const world = worldSize > 0 && ranks[0] === 0 ? Array.from({ length: worldSize }, (_, r) => r) : ranks;
  const standFor = folded ? (world.length > ranks.length ? world : ranks) : undefined;
  const { lanes, laneOf } = findLanes(events, shown, standFor);
  const { laneOffset, eventIndex } = groupByLane(laneOf, lanes.length);
  const { endUs, ...cols } = fillColumns(events, laneOffset, eventIndex);
  return {
    lanes,
    laneOffset,
    eventIndex,
    ...cols,
    blockMaxDurUs: blockMaxDur(cols.durUs),
    ...exposedColumns(lanes, events, laneOf),
    endUs,
    ranksTotal: ranks.length,
    ranksShown: folded ? ranks.length : shown.size,
    alike,
    folded,
  };
}

/** Per lane, over the whole step (µs): the red drawn (exposed band, or waits under it) and the waits' rest. */
export function laneRedTotals(c: TimelineColumns): { redUs: number[]; peerWaitUs: number[] } {
  const sum = (set: LaneIntervals, li: number) => {
    let t = 0;
    for (let k = set.offset[li]; k < set.offset[li + 1]; k++) t += set.endUs[k] - set.startUs[k];
    return t;
  };
  const exposed = { offset: c.exposedOffset, startUs: c.exposedStartUs, endUs: c.exposedEndUs };
  const redUs: number[] = [];
  const peerWaitUs: number[] = [];
  for (let li = 0; li < c.lanes.length; li++) {
    let waitUs = 0;
    for (let p = c.laneOffset[li]; p < c.laneOffset[li + 1]; p++) {
      if (c.kind[p] === KIND_INDEX.wait) waitUs += c.durUs[p];
    }
    const red = sum(exposed, li) + sum(c.waitExposed, li);
    redUs.push(red);
    peerWaitUs.push(Math.max(0, waitUs - sum(c.waitExposed, li)));
  }
  return { redUs, peerWaitUs };
}

/**
 * A drawn wait's two parts (µs): under exposed communication (red) and the rest, a late peer; null
 * when the event is not a drawn wait.
 */
export function waitParts(c: TimelineColumns, eventIndex: number): { exposedUs: number; peerUs: number } | null {
  const p = c.eventIndex.indexOf(eventIndex);
  if (p < 0 || c.kind[p] !== KIND_INDEX.wait) return null;
  let li = 0;
  while (c.laneOffset[li + 1] <= p) li++;
  const s = c.startUs[p];
  const e = s + c.durUs[p];
  const w = c.waitExposed;
  let exposedUs = 0;
  for (let k = w.offset[li]; k < w.offset[li + 1]; k++) {
    exposedUs += Math.max(0, Math.min(e, w.endUs[k]) - Math.max(s, w.startUs[k]));
  }
  return { exposedUs, peerUs: Math.max(0, c.durUs[p] - exposedUs) };
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
