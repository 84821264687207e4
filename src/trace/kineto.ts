// Kineto traces (torch.profiler → export_chrome_trace) read as Holistic Trace Analysis reads them
// (see hta.ts): whole-µs times, HTA's analysis window, every GPU event HTA counts — kernels of
// every collective, memcpy / memset and CUDA sync events — with HTA's category as the event kind.

import { commKindOf, htaCategory, htaWindow, type RawEvent } from './hta';
import type { TraceEvent } from './event';
import { fail, isObject, readInt, readNumber, readString, type Json } from './import_fields';

export const MAX_RANK = 65535;

/** A Kineto-style arg: an integer, or −1 when absent or not an integer (as HTA's parser fills it). */
const intArg = (args: unknown, key: string): number => {
  const v = isObject(args) ? args[key] : undefined;
  return Number.isInteger(v) ? (v as number) : -1;
};

/** Every 'X' event of a file as HTA holds it; malformed times name the event and field. */
export function rawEvents(evs: readonly unknown[], fw: string, rankOf?: (e: Json, w: string) => number): { raw: RawEvent[]; rank: number[] } {
  const raw: RawEvent[] = [];
  const rank: number[] = [];
  for (let i = 0; i < evs.length; i++) {
    const e = evs[i];
    const w = `${fw}.traceEvents[${i}]`;
    if (!isObject(e)) fail(w, 'an object', e);
    if (e.ph !== 'X') continue;
    const args = e.args;
    const ev: RawEvent = {
      index: i,
      name: readString(e, 'name', w),
      cat: typeof e.cat === 'string' ? e.cat : '',
      ts: Math.floor(readNumber(e, 'ts', w)), // HTA reads ts and dur as int64 µs
      dur: e.dur === undefined ? 0 : Math.floor(readNumber(e, 'dur', w, 0)),
      stream: intArg(args, 'stream'),
      correlation: intArg(args, 'correlation'),
      ...(isObject(args) && args['Collective name'] !== undefined ? { collective: args['Collective name'] } : {}),
    };
    raw.push(ev);
    rank.push(rankOf && ev.stream >= 0 ? rankOf(e, w) : -1);
  }
  return { raw, rank };
}

/** Trace events of the GPU events HTA analyses; `rankOf(i)` gives raw event i's rank. */
export function kinetoEvents(
  raw: readonly RawEvent[],
  rankOf: (i: number) => number,
  opts: { readonly mtia: boolean; readonly merged: boolean },
): { events: TraceEvent[]; warnings: readonly string[] } {
  const index = new Map<RawEvent, number>();
  raw.forEach((e, i) => index.set(e, i));
  // a merged file mixes processes whose correlation ids and ProfilerSteps collide: HTA reads one
  // file per rank, so a merged file is analysed whole (every stream event), and says so
  const win = opts.merged ? wholeTrace(raw) : htaWindow(raw, opts.mtia);
  const events: TraceEvent[] = [];
  win.gpu.forEach((e, j) => {
    const rank = rankOf(index.get(e)!);
    const cat = htaCategory(e.name, e.cat);
    const it = win.iteration[j];
    const base = { rank, name: e.name, start: e.ts, dur: e.dur, ...(it >= 0 ? { iteration: it } : {}) };
    if (cat === 'communication') events.push({ ...base, stream: `comm:stream${e.stream}`, kind: commKindOf(e.name, e.collective) });
    else events.push({ ...base, stream: 'compute', kind: cat === 'compute' ? 'compute' : cat });
  });
  return { events, warnings: win.warnings };
}

function wholeTrace(raw: readonly RawEvent[]) {
  const gpu = raw.filter((e) => e.stream >= 0);
  return { gpu, iteration: gpu.map(() => -1), warnings: ['a merged file (several GPUs): analysed whole, without HTA\'s iteration window (HTA reads one file per rank)'] };
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
