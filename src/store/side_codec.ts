// Worker → page transfer of simulation results. Structured clone of a SideResult is slow where it
// is big (llama3-70b × 32 ranks: ~300k event objects and a 20k-node schedule graph take seconds
// to clone), so the worker packs events into columns (typed arrays, moved not copied, plus a
// string table) and the schedule's graph into JSON, which the page parses only if something
// reads schedule.graph (the UI reads buckets and reasons). Unpacking gives back equal events
// (same keys in the same order, same values).

import type { Schedule } from '../backends/types';
import type { StepGraph } from '../graph/types';
import type { EventKind, StreamName, TraceEvent } from '../trace/event';
import type { SideResult } from './types';

const KEYS = ['rank', 'stream', 'name', 'kind', 'start', 'dur', 'bytes', 'op', 'bucketId', 'params'] as const;
type Key = (typeof KEYS)[number];
const KEY_ID: Readonly<Record<string, number>> = Object.fromEntries(KEYS.map((k, i) => [k, i + 1]));

export interface PackedEvents {
  readonly n: number;
  /** Key lists, one per distinct event shape (keys in insertion order). */
  readonly shapes: readonly (readonly Key[])[];
  readonly strings: readonly string[];
  readonly params: readonly (readonly string[])[];
  readonly shape: Uint16Array;
  readonly rank: Float64Array;
  readonly start: Float64Array;
  readonly dur: Float64Array;
  readonly bytes: Float64Array;
  readonly bucketId: Float64Array;
  /** Indexes into strings / params; -1 for a key present with value undefined. */
  readonly stream: Int32Array;
  readonly name: Int32Array;
  readonly kind: Int32Array;
  readonly op: Int32Array;
  readonly paramsIdx: Int32Array;
}

export type PackedSide = Omit<SideResult, 'events' | 'schedule'> & {
  readonly events: PackedEvents | readonly TraceEvent[];
  readonly schedule?: Omit<Schedule, 'graph'> & { readonly graphJson: string };
};

/** Columns of `events`, or null when an event has a field this codec does not know (sent as is). */
export function packEvents(events: readonly TraceEvent[]): PackedEvents | null {
  const n = events.length;
  const shapeIdx = new Map<number, number>();
  const shapes: Key[][] = [];
  const strIdx = new Map<string, number>();
  const strings: string[] = [];
  const parIdx = new Map<readonly string[], number>();
  const params: (readonly string[])[] = [];
  const str = (s: string | undefined) => {
    if (s === undefined) return -1;
    let i = strIdx.get(s);
    if (i === undefined) (i = strings.length), strings.push(s), strIdx.set(s, i);
    return i;
  };
  const p = {
    shape: new Uint16Array(n), rank: new Float64Array(n), start: new Float64Array(n), dur: new Float64Array(n),
    bytes: new Float64Array(n), bucketId: new Float64Array(n), stream: new Int32Array(n), name: new Int32Array(n),
    kind: new Int32Array(n), op: new Int32Array(n), paramsIdx: new Int32Array(n),
  };
  for (let i = 0; i < n; i++) {
    const e = events[i];
    // the key sequence as a base-11 number (≤ 10 known keys): order-exact, no string building
    let sig = 0;
    for (const k in e) {
      const id = Object.hasOwn(KEY_ID, k) ? KEY_ID[k] : 0;
      if (id === 0) return null;
      sig = sig * 11 + id;
    }
    let s = shapeIdx.get(sig);
    if (s === undefined) {
      if (shapes.length >= 0xffff) return null;
      s = shapes.length;
      shapes.push(Object.keys(e) as Key[]);
      shapeIdx.set(sig, s);
    }
    p.shape[i] = s;
    p.rank[i] = e.rank;
    p.start[i] = e.start;
    p.dur[i] = e.dur;
    p.bytes[i] = e.bytes ?? 0;
    p.bucketId[i] = e.bucketId ?? 0;
    p.stream[i] = str(e.stream);
    p.name[i] = str(e.name);
    p.kind[i] = str(e.kind);
    p.op[i] = str(e.op);
    if (e.params === undefined) p.paramsIdx[i] = -1;
    else {
      let k = parIdx.get(e.params);
      if (k === undefined) (k = params.length), params.push(e.params), parIdx.set(e.params, k);
      p.paramsIdx[i] = k;
    }
  }
  return { n, shapes, strings, params, ...p };
}

export function unpackEvents(p: PackedEvents): TraceEvent[] {
  const out: TraceEvent[] = new Array(p.n);
  const { strings } = p;
  const at = (i: number) => (i < 0 ? undefined : strings[i]);
  for (let i = 0; i < p.n; i++) {
    const o: Record<string, unknown> = {};
    for (const k of p.shapes[p.shape[i]]) {
      switch (k) {
        case 'rank': o.rank = p.rank[i]; break;
        case 'stream': o.stream = at(p.stream[i]) as StreamName; break;
        case 'name': o.name = at(p.name[i]); break;
        case 'kind': o.kind = at(p.kind[i]) as EventKind; break;
        case 'start': o.start = p.start[i]; break;
        case 'dur': o.dur = p.dur[i]; break;
        case 'bytes': o.bytes = p.bytes[i]; break;
        case 'op': o.op = at(p.op[i]); break;
        case 'bucketId': o.bucketId = p.bucketId[i]; break;
        case 'params': o.params = p.paramsIdx[i] < 0 ? undefined : p.params[p.paramsIdx[i]]; break;
      }
    }
    out[i] = o as unknown as TraceEvent;
  }
  return out;
}

const isPacked = (e: PackedSide['events']): e is PackedEvents => !Array.isArray(e);

/** A side for postMessage, and the buffers to transfer with it. */
export function packSide(side: SideResult): { packed: PackedSide; transfer: ArrayBuffer[] } {
  const { events, schedule, ...rest } = side;
  const cols = packEvents(events);
  const transfer: ArrayBuffer[] = [];
  if (cols) for (const v of Object.values(cols)) if (ArrayBuffer.isView(v)) transfer.push(v.buffer as ArrayBuffer);
  let packedSchedule: PackedSide['schedule'];
  if (schedule) {
    const { graph, ...s } = schedule;
    packedSchedule = { ...s, graphJson: JSON.stringify(graph) };
  }
  return { packed: { ...rest, events: cols ?? events, ...(packedSchedule ? { schedule: packedSchedule } : {}) }, transfer };
}

export function unpackSide(p: PackedSide): SideResult {
  const { events, schedule, ...rest } = p;
  let sched: Schedule | undefined;
  if (schedule) {
    const { graphJson, ...s } = schedule;
    const obj = { ...s } as Schedule & { graph: StepGraph };
    // parsed on first read: the timeline and panels never read the rewritten graph
    Object.defineProperty(obj, 'graph', {
      configurable: true,
      enumerable: true,
      get() {
        const graph = JSON.parse(graphJson) as StepGraph;
        Object.defineProperty(obj, 'graph', { value: graph, enumerable: true, writable: false, configurable: false });
        return graph;
      },
    });
    sched = obj;
  }
  return { ...rest, events: isPacked(events) ? unpackEvents(events) : events, ...(sched ? { schedule: sched } : {}) };
}
