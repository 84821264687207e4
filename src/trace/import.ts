// Trace import: our own Chrome export (exact round trip: streams, names, buckets, memory) and
// Kineto traces from the PyTorch profiler (torch.profiler → export_chrome_trace; one file per
// rank, or one merged file with pid = rank), read with Holistic Trace Analysis' definitions
// (hta.ts, kineto.ts): every communication kernel is communication, whatever its collective;
// memcpy / memset / sync events are non-compute GPU time; HTA's iteration window; whole µs.
// Malformed input → ImportError naming the file, event index and field. Linear in the events,
// with no spread of an unbounded array into a call (a 1M-kernel trace imports).

import { ImportError, err, ok, type Result } from '../errors';
import { TRACE_FORMAT, MEMORY_COUNTER } from './chrome_export';
import type { EventKind, MemoryCurve, StreamName, TraceEvent } from './event';
import {
  fail,
  isObject,
  readInt,
  readNumber,
  readObject,
  readSpan,
  readString,
  readTs,
  type Json,
} from './import_fields';
import { checkOneRun, runIdentity, type RunIdentity } from './import_runs';
import { fileRank, kinetoEvents, MAX_RANK, rawEvents } from './kineto';
import { COMM_KINDS } from './kinds';
import { parseStream } from './stream';

export interface ImportedTrace {
  readonly events: readonly TraceEvent[];
  readonly memory?: readonly MemoryCurve[];
  readonly worldSize: number;
  readonly source: 'fsdp-sim' | 'kineto';
  /** What was read but not analysed, or guessed (a rank): said, not swallowed. */
  readonly warnings: readonly string[];
}

const EVENT_KINDS: ReadonlySet<string> = new Set<EventKind>(['compute', ...COMM_KINDS, 'memory', 'sync', 'wait']);
/** Kineto categories of GPU events (HTA's GPU_EVENT_CATEGORY_PATTERN). */
const GPU_CAT = /kernel|^gpu_mem|^mtia_ccp_events|^cuda_sync/;

interface FileParse {
  events: TraceEvent[];
  memory: Map<number, [number, number][]>; // rank → (t, bytes)
  worldSize: number;
  ours: boolean;
  ranks: Set<number>;
  warnings: string[];
  /** GPU events outside HTA's window (no CPU launch in it): what a trace without kept events holds. */
  outside: number;
  identity: RunIdentity; // world size and run id the file states (import_runs.ts)
}

/** A Chrome trace in JSON Object Format, JSON Array Format, or JSON text of either. */
function asTraceObject(file: unknown, where: string): Json {
  let x = file;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch (e) {
      const msg = e instanceof RangeError ? 'nested too deeply to read' : (e as Error).message;
      throw new ImportError(where, `${where} is not valid JSON: ${msg}`);
    }
  }
  if (Array.isArray(x)) return { traceEvents: x };
  if (!isObject(x)) fail(where, 'a Chrome trace object {traceEvents: [...]}', x);
  if (!Array.isArray(x.traceEvents)) fail(`${where}.traceEvents`, 'an array of trace events', x.traceEvents);
  return x;
}

/** One of our own kernels / waits: the fsdp_sim args restore it exactly. */
function ownEvent(e: Json, own: Json, w: string, rank: number): TraceEvent {
  const ow = `${w}.args.fsdp_sim`;
  const kind = readString(own, 'kind', ow);
  if (!EVENT_KINDS.has(kind)) fail(`${ow}.kind`, `one of [${[...EVENT_KINDS].join(', ')}]`, kind);
  const stream = readString(own, 'stream', ow);
  if (parseStream(stream) === undefined) fail(`${ow}.stream`, "'compute', 'side:<name>' or 'comm:<group>'", stream);
  const span = readSpan(e, w);
  const ev: { -readonly [K in keyof TraceEvent]: TraceEvent[K] } = {
    rank,
    stream: stream as StreamName,
    name: readString(own, 'name', ow),
    kind: kind as EventKind,
    start: span.ts,
    dur: span.dur,
  };
  if (own.bucketId !== undefined) ev.bucketId = readInt(own, 'bucketId', ow, 0, Number.MAX_SAFE_INTEGER);
  if (own.bytes !== undefined) ev.bytes = readNumber(own, 'bytes', ow, 0);
  if (own.op !== undefined) ev.op = readString(own, 'op', ow);
  if (own.params !== undefined) {
    const p = own.params;
    if (!Array.isArray(p) || !p.every((x) => typeof x === 'string')) fail(`${ow}.params`, 'an array of strings', p);
    ev.params = p as string[];
  }
  return ev;
}

function parseFile(raw: unknown, fileIndex: number, fileCount: number): FileParse {
  const fw = fileCount > 1 ? `file[${fileIndex}]` : 'trace';
  const t = asTraceObject(raw, fw);
  const ours = isObject(t.fsdpSim) && t.fsdpSim.format === TRACE_FORMAT;
  let worldSize = 0;
  if (t.distributedInfo !== undefined) {
    const di = readObject(t, 'distributedInfo', fw);
    if (di.world_size !== undefined) worldSize = readInt(di, 'world_size', `${fw}.distributedInfo`, 1, MAX_RANK + 1);
  }
  const evs = t.traceEvents as unknown[];
  // which pids hold GPU events: one → a per-rank file, several → a merged file (pid = rank)
  const gpuPids = new Set<unknown>();
  const gpuCat = new Map<string, boolean>();
  for (const e of evs) {
    if (!isObject(e) || e.ph !== 'X' || typeof e.cat !== 'string') continue;
    let gpu = gpuCat.get(e.cat);
    if (gpu === undefined) gpuCat.set(e.cat, (gpu = GPU_CAT.test(e.cat.toLowerCase())));
    if (gpu) gpuPids.add(e.pid);
  }
  const merged = gpuPids.size > 1;
  const out: FileParse = {
    events: [],
    memory: new Map(),
    worldSize,
    ours,
    ranks: new Set(),
    warnings: [],
    outside: 0,
    identity: runIdentity(t, fw),
  };
  const own = merged ? 0 : fileRank(t, fw, fileIndex, fileCount, out.warnings); // merged: ranks are pids
  const rankOf = (e: Json, w: string): number => (merged ? readInt(e, 'pid', w, 0, MAX_RANK) : own);
  readMemory(evs, fw, rankOf, own, merged, out);
  if (ours) {
    evs.forEach((e, i) => {
      const w = `${fw}.traceEvents[${i}]`;
      if (!isObject(e) || e.ph !== 'X' || !isObject(e.args) || !isObject(e.args.fsdp_sim)) return;
      out.events.push(ownEvent(e, e.args.fsdp_sim, w, rankOf(e, w)));
    });
  } else {
    const { raw: rs, rank } = rawEvents(evs, fw, rankOf);
    const mtia = rs.some((e) => e.cat === 'mtia_ccp_events');
    const k = kinetoEvents(rs, (i) => (rank[i] >= 0 ? rank[i] : own), { mtia, merged });
    out.events = k.events;
    out.outside = k.outside;
    out.warnings.push(...k.warnings.map((m) => `${fw}: ${m}`));
  }
  for (const e of out.events) out.ranks.add(e.rank);
  return out;
}

/** Memory curves: our counter events, or Kineto's allocator records (profile_memory=True). */
function readMemory(
  evs: readonly unknown[],
  fw: string,
  rankOf: (e: Json, w: string) => number,
  own: number,
  merged: boolean,
  out: FileParse,
): void {
  const add = (rank: number, ts: number, bytes: number) => {
    const list = out.memory.get(rank) ?? [];
    list.push([ts, bytes]);
    out.memory.set(rank, list);
  };
  evs.forEach((e, i) => {
    if (!isObject(e)) return;
    const w = `${fw}.traceEvents[${i}]`;
    if (e.ph === 'C' && e.name === MEMORY_COUNTER) {
      const args = readObject(e, 'args', w);
      add(rankOf(e, w), readTs(e, w), readNumber(args, 'bytes', `${w}.args`, 0));
    } else if (e.ph === 'i' && e.name === '[memory]' && isObject(e.args) && e.args['Device Type'] === 1) {
      // one record per alloc/free on a CUDA device
      const rank = merged ? readInt(e.args, 'Device Id', `${w}.args`, 0, MAX_RANK) : own;
      add(rank, readTs(e, w), readNumber(e.args, 'Total Allocated', `${w}.args`, 0));
    }
  });
}

/** Files of one trace: a list of files, or one file (an object, JSON text, or an array of events). */
function asFiles(input: unknown): unknown[] {
  if (!Array.isArray(input)) return [input];
  // an array of events is one file in JSON Array Format; checking every element is O(n) but no spread
  for (const x of input) if (!(isObject(x) && 'ph' in x)) return input;
  return [input];
}

/**
 * A file parsed as soon as it is read (trace_stream.ts): only what the import keeps of it stays
 * (its trace events, memory, warnings), not its raw events; importTrace takes it as a file.
 */
class ParsedTraceFile {
  constructor(readonly result: FileParse | ImportError | RangeError) {}
}

/** File `fileIndex` of `fileCount` parsed now; its error, if any, is thrown where importTrace meets it. */
export function parseTraceFile(raw: unknown, fileIndex: number, fileCount: number): unknown {
  try {
    return new ParsedTraceFile(parseFile(raw, fileIndex, fileCount));
  } catch (e) {
    if (e instanceof ImportError || e instanceof RangeError) return new ParsedTraceFile(e);
    throw e;
  }
}

const parsedOf = (f: unknown, i: number, n: number): FileParse => {
  if (!(f instanceof ParsedTraceFile)) return parseFile(f, i, n);
  if (f.result instanceof Error) throw f.result;
  return f.result;
};

/** One ImportError naming both files when two hold the same rank. */
function checkDistinctRanks(parsed: readonly FileParse[]): void {
  const seen = new Map<number, number>();
  parsed.forEach((p, i) => {
    for (const r of p.ranks) {
      const j = seen.get(r);
      if (j !== undefined && j !== i)
        throw new ImportError(
          `file[${i}]`,
          `file[${i}] holds rank ${r}, which file[${j}] also holds; give one file per rank (distributedInfo.rank)`,
        );
      seen.set(r, i);
    }
  });
}

function memoryCurves(parsed: readonly FileParse[], origin: number): MemoryCurve[] {
  const byRank = new Map<number, [number, number][]>();
  for (const p of parsed) {
    for (const [r, pts] of p.memory) {
      const list = byRank.get(r) ?? [];
      for (const x of pts) list.push(x);
      byRank.set(r, list);
    }
  }
  return [...byRank.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([rank, pts]) => {
      pts.sort((a, b) => a[0] - b[0]);
      let peak = 0;
      for (const p of pts) peak = Math.max(peak, p[1]);
      return { rank, t: pts.map((p) => p[0] - origin), bytes: pts.map((p) => p[1]), peakBytes: peak };
    });
}

const byRankStartStream = (a: TraceEvent, b: TraceEvent): number =>
  a.rank - b.rank || a.start - b.start || (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0);

/** Sorted by rank, start, stream; a trace already in that order (most files) is only checked. */
function sortEvents(events: TraceEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    if (byRankStartStream(events[i - 1], events[i]) > 0) {
      events.sort(byRankStartStream);
      return;
    }
  }
}

/**
 * Read one trace file or several (one per rank). Each may be a parsed object or JSON text.
 * Kineto times are shifted so the earliest GPU event over all ranks starts at 0 (relative timing
 * between ranks is kept); our own export keeps its times.
 */
export function importTrace(input: unknown): Result<ImportedTrace, ImportError> {
  try {
    const files = asFiles(input);
    if (files.length === 0) throw new ImportError('files', 'files must hold at least one trace, got an empty list');
    const parsed = files.map((f, i) => parsedOf(f, i, files.length));
    checkDistinctRanks(parsed);
    // a rank file without GPU events was left out unsaid (and escaped the rank check above)
    const idle = files.length > 1 ? parsed.findIndex((p) => !p.events.length && !p.outside && !p.memory.size) : -1;
    if (idle >= 0)
      throw new ImportError(
        `file[${idle}]`,
        `file[${idle}] holds no GPU kernels (ph "X" events with args.stream) while the other files do; ` +
          'was its rank recorded with ProfilerActivity.CUDA?',
      );
    checkOneRun(
      parsed.map((p) => p.identity),
      parsed.flatMap((p) => [...p.ranks].map((rank) => ({ where: p.identity.where, rank }))),
    );
    const events: TraceEvent[] = [];
    for (const p of parsed) for (const e of p.events) events.push(e);
    const outside = parsed.reduce((n, p) => n + p.outside, 0);
    if (events.length === 0 && outside > 0)
      throw new ImportError(
        'traceEvents',
        `traceEvents holds ${outside} GPU event(s), none in HTA's window: HTA analyses a GPU event only when a ` +
          'CPU event (cudaLaunchKernel, ...) with the same args.correlation launched it before the last ' +
          'ProfilerStep; here none did (launch events missing, or every kernel in the last step)',
      );
    if (events.length === 0) {
      throw new ImportError(
        'traceEvents',
        'traceEvents holds no GPU kernels (ph "X" events with args.stream: kernels, memcpy, memset, sync) ' +
          "in HTA's window; was the trace recorded with ProfilerActivity.CUDA?",
      );
    }
    const ours = parsed.every((p) => p.ours);
    let origin = 0;
    if (!ours) {
      origin = Infinity;
      for (const e of events) origin = Math.min(origin, e.start);
      // the importer built these objects a moment ago: shifting them in place saves a 1M-object copy
      for (const e of events) (e as { start: number }).start -= origin;
    }
    sortEvents(events);
    const memory = memoryCurves(parsed, origin);
    let worldSize = 1;
    for (const e of events) worldSize = Math.max(worldSize, e.rank + 1);
    for (const m of memory) worldSize = Math.max(worldSize, m.rank + 1);
    for (const p of parsed) worldSize = Math.max(worldSize, p.worldSize);
    const warnings = parsed.flatMap((p) => p.warnings);
    return ok({
      events,
      ...(memory.length ? { memory } : {}),
      worldSize,
      source: ours ? 'fsdp-sim' : 'kineto',
      warnings,
    });
  } catch (e) {
    if (e instanceof ImportError) return err(e);
    if (e instanceof RangeError) return err(new ImportError('trace', `trace could not be read: ${e.message}`));
    throw e;
  }
}
