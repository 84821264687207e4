// Worker → page transfer of simulation results. Structured clone of a SideResult is slow where it
// is big (llama3-70b × 32 ranks: ~300k event objects and a 20k-node schedule graph take seconds
// to clone), so the worker packs events into columns (typed arrays, moved not copied, plus a
// string table) and the schedule's graph into JSON, which the page parses only if something
// reads schedule.graph (the UI reads buckets and reasons). Unpacking gives back equal events
// (same keys in the same order, same values).

import type { Schedule } from '../backends';
import type { StepGraph } from '../graph';
import { rerankEvent } from '../sim';
import type { EventKind, StreamName, TraceEvent } from '../trace';
import type { SideResult } from './store_types';

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
  /**
   * When set, the columns hold one block of events and the full list is that block once per
   * entry, with rank replaced (a symmetric simulation's copies of one rank for each rank shown).
   */
  readonly repeatRanks?: readonly number[];
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
    if (i === undefined) {
      i = strings.length;
      strings.push(s);
      strIdx.set(s, i);
    }
    return i;
  };
  const p = {
    shape: new Uint16Array(n),
    rank: new Float64Array(n),
    start: new Float64Array(n),
    dur: new Float64Array(n),
    bytes: new Float64Array(n),
    bucketId: new Float64Array(n),
    stream: new Int32Array(n),
    name: new Int32Array(n),
    kind: new Int32Array(n),
    op: new Int32Array(n),
    paramsIdx: new Int32Array(n),
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
      if (k === undefined) {
        k = params.length;
        params.push(e.params);
        parIdx.set(e.params, k);
      }
      p.paramsIdx[i] = k;
    }
  }
  return { n, shapes, strings, params, ...p };
}

/** Key sequence of an event as a base-11 number (≤ 10 known keys), or -1 for an unknown key. */
function signature(e: TraceEvent): number {
  let sig = 0;
  for (const k in e) {
    const id = Object.hasOwn(KEY_ID, k) ? KEY_ID[k] : 0;
    if (id === 0) return -1;
    sig = sig * 11 + id;
  }
  return sig;
}

/**
 * If `events` is one block of events repeated per rank with only `rank` changed (same keys in the
 * same order, same values, the same params array), the block and the ranks; else null.
 */
export function repeatedBlock(events: readonly TraceEvent[]): { block: readonly TraceEvent[]; ranks: number[] } | null {
  const n = events.length;
  if (n === 0) return null;
  const r0 = events[0].rank;
  let len = 0;
  while (len < n && events[len].rank === r0) len++;
  if (n % len !== 0 || n === len) return null;
  const sigs = new Float64Array(len);
  for (let i = 0; i < len; i++) if ((sigs[i] = signature(events[i])) < 0) return null;
  const ranks: number[] = [];
  for (let at = 0; at < n; at += len) {
    const rank = events[at].rank;
    ranks.push(rank);
    if (at === 0) continue;
    for (let i = 0; i < len; i++) {
      const e = events[at + i];
      const f = events[i];
      if (
        e.rank !== rank ||
        e.start !== f.start ||
        e.dur !== f.dur ||
        e.name !== f.name ||
        e.kind !== f.kind ||
        e.stream !== f.stream ||
        e.op !== f.op ||
        e.bytes !== f.bytes ||
        e.bucketId !== f.bucketId ||
        e.params !== f.params ||
        signature(e) !== sigs[i]
      )
        return null;
    }
  }
  return { block: events.slice(0, len), ranks };
}

export function unpackEvents(p: PackedEvents): TraceEvent[] {
  const block = unpackBlock(p);
  if (p.repeatRanks === undefined) return block;
  // shapes the simulator's constructors make are copied by rerankEvent's literals (fast); any
  // other shape key by key
  const literal = p.shapes.map((keys, s) => {
    const i = p.shape.indexOf(s);
    return i >= 0 && Object.keys(rerankEvent(block[i], block[i].rank + 1)).join() === keys.join();
  });
  const out: TraceEvent[] = [];
  for (const rank of p.repeatRanks) {
    if (rank === block[0]?.rank) {
      for (const e of block) out.push(e);
      continue;
    }
    for (let i = 0; i < block.length; i++) {
      const s = p.shape[i];
      if (literal[s]) {
        out.push(rerankEvent(block[i], rank));
        continue;
      }
      const e = block[i] as unknown as Record<string, unknown>;
      const o: Record<string, unknown> = {};
      for (const k of p.shapes[s]) o[k] = k === 'rank' ? rank : e[k];
      out.push(o as unknown as TraceEvent);
    }
  }
  return out;
}

function unpackBlock(p: PackedEvents): TraceEvent[] {
  const out: TraceEvent[] = new Array(p.n);
  const { strings } = p;
  const at = (i: number) => (i < 0 ? undefined : strings[i]);
  for (let i = 0; i < p.n; i++) {
    const o: Record<string, unknown> = {};
    for (const k of p.shapes[p.shape[i]]) {
      switch (k) {
        case 'rank':
          o.rank = p.rank[i];
          break;
        case 'stream':
          o.stream = at(p.stream[i]) as StreamName;
          break;
        case 'name':
          o.name = at(p.name[i]);
          break;
        case 'kind':
          o.kind = at(p.kind[i]) as EventKind;
          break;
        case 'start':
          o.start = p.start[i];
          break;
        case 'dur':
          o.dur = p.dur[i];
          break;
        case 'bytes':
          o.bytes = p.bytes[i];
          break;
        case 'op':
          o.op = at(p.op[i]);
          break;
        case 'bucketId':
          o.bucketId = p.bucketId[i];
          break;
        case 'params':
          o.params = p.paramsIdx[i] < 0 ? undefined : p.params[p.paramsIdx[i]];
          break;
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
  // a symmetric side repeats one rank's events per rank: pack the block once
  const rep = side.symmetric ? repeatedBlock(events) : null;
  const blockCols = rep ? packEvents(rep.block) : null;
  const cols = blockCols && rep ? { ...blockCols, repeatRanks: rep.ranks } : packEvents(events);
  const transfer: ArrayBuffer[] = [];
  if (cols) for (const v of Object.values(cols)) if (ArrayBuffer.isView(v)) transfer.push(v.buffer as ArrayBuffer);
  let packedSchedule: PackedSide['schedule'];
  if (schedule) {
    const { graph, ...s } = schedule;
    packedSchedule = { ...s, graphJson: JSON.stringify(graph) };
  }
  return {
    packed: { ...rest, events: cols ?? events, ...(packedSchedule ? { schedule: packedSchedule } : {}) },
    transfer,
  };
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
