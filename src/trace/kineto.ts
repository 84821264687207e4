// Kineto traces (torch.profiler → export_chrome_trace) read as Holistic Trace Analysis reads them
// (see hta.ts): whole-µs times, HTA's analysis window, every GPU event HTA counts — kernels of
// every collective, memcpy / memset and CUDA sync events — with HTA's category as the event kind.

import { commKindOf, htaCategory, htaWindow, wholeWindow, type RawEvent } from './hta';
import type { EventKind, StreamName, TraceEvent } from './event';
import { isCommKind } from './kinds';
import { commStream as commStreamName } from './stream';
import { fail, isObject, MAX_TRACE_US, readInt, readSpan, readString, type Json } from './import_fields';

export const MAX_RANK = 65535;

/** A Kineto-style arg: an integer, or −1 when absent or not an integer (as HTA's parser fills it). */
const intArg = (args: unknown, key: string): number => {
  const v = isObject(args) ? args[key] : undefined;
  return Number.isInteger(v) ? (v as number) : -1;
};

/** Every 'X' event of a file as HTA holds it; malformed times name the event and field. */
export function rawEvents(
  evs: readonly unknown[],
  fw: string,
  rankOf?: (e: Json, w: string) => number,
): { raw: RawEvent[]; rank: number[] } {
  const raw: RawEvent[] = [];
  const rank: number[] = [];
  const where = (i: number) => `${fw}.traceEvents[${i}]`; // built only for a message: 1M strings cost seconds
  for (let i = 0; i < evs.length; i++) {
    const e = evs[i];
    if (!isObject(e)) fail(where(i), 'an object', e);
    if (e.ph !== 'X') continue;
    const args = e.args;
    const { name, ts, dur } = e;
    // the fast path checks what readSpan does (a name, 0 ≤ ts, dur ≥ 0, ts + dur < 2^53 µs)
    const wellFormed =
      typeof name === 'string' &&
      typeof ts === 'number' &&
      ts >= 0 &&
      (dur === undefined || (typeof dur === 'number' && dur >= 0 && ts + dur < MAX_TRACE_US)) &&
      ts < MAX_TRACE_US;
    const span = wellFormed ? { ts, dur: dur === undefined ? 0 : (dur as number) } : readSpan(e, where(i), 0);
    const ev: RawEvent = {
      name: wellFormed ? name : readString(e, 'name', where(i)),
      cat: typeof e.cat === 'string' ? e.cat : '',
      // HTA reads ts and dur as int64 µs (readSpan throws the located error for a malformed one)
      ts: Math.floor(span.ts),
      dur: Math.floor(span.dur),
      stream: intArg(args, 'stream'),
      correlation: intArg(args, 'correlation'),
      collective: isObject(args) ? args['Collective name'] : undefined, // one object shape for all
    };
    raw.push(ev);
    rank.push(rankOf && ev.stream >= 0 ? rankOf(e, where(i)) : -1);
  }
  return { raw, rank };
}

/** Trace events of the GPU events HTA analyses; `rankOf(i)` gives raw event i's rank. */
export function kinetoEvents(
  raw: readonly RawEvent[],
  rankOf: (i: number) => number,
  opts: { readonly mtia: boolean; readonly merged: boolean },
): { events: TraceEvent[]; warnings: readonly string[]; outside: number } {
  // a merged file mixes processes whose correlation ids and ProfilerSteps collide: HTA reads one
  // file per rank, so a merged file is analysed whole (every stream event), and says so
  const win = opts.merged
    ? wholeWindow(raw, [
        "a merged file (several GPUs): analysed whole, without HTA's iteration window (HTA reads one file per rank)",
      ])
    : htaWindow(raw, opts.mtia);
  const kinds = new Map<string, EventKind>(); // a trace repeats few names: classify each once
  const kindOf = (e: RawEvent): EventKind => {
    const key = `${e.cat}\u0000${typeof e.collective === 'string' ? e.collective : ''}\u0000${e.name}`;
    let k = kinds.get(key);
    if (k === undefined) {
      const cat = htaCategory(e.name, e.cat);
      k = cat === 'communication' ? commKindOf(e.name, e.collective) : cat;
      kinds.set(key, k);
    }
    return k;
  };
  const streams = new Map<number, StreamName>();
  const commStream = (n: number): StreamName => {
    let s = streams.get(n);
    if (s === undefined) streams.set(n, (s = commStreamName(`stream${n}`)));
    return s;
  };
  const events: TraceEvent[] = new Array(win.kept.length);
  for (let j = 0; j < win.kept.length; j++) {
    const i = win.kept[j];
    const e = raw[i];
    const kind = kindOf(e);
    const stream = isCommKind(kind) ? commStream(e.stream) : 'compute';
    const it = win.iteration[j];
    events[j] =
      it >= 0
        ? { rank: rankOf(i), stream, name: e.name, kind, start: e.ts, dur: e.dur, iteration: it }
        : { rank: rankOf(i), stream, name: e.name, kind, start: e.ts, dur: e.dur };
  }
  return { events, warnings: win.warnings, outside: win.outside ?? 0 };
}

/** A file's rank: distributedInfo.rank; else file i of several is rank i; else 0 — each said in a warning. */
export function fileRank(t: Json, fw: string, fileIndex: number, fileCount: number, warnings: string[]): number {
  const di = t.distributedInfo;
  if (isObject(di) && di.rank !== undefined) return readInt(di, 'rank', `${fw}.distributedInfo`, 0, MAX_RANK);
  if (di !== undefined && !isObject(di)) fail(`${fw}.distributedInfo`, 'an object', di);
  const r = fileCount > 1 ? fileIndex : 0;
  warnings.push(`${fw} has no distributedInfo.rank: read as rank ${r}`);
  return r;
}
