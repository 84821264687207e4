// Trace import: our own Chrome export (exact round trip: streams, names, buckets, memory) and
// Kineto traces from the PyTorch profiler (torch.profiler → export_chrome_trace; one file per
// rank or one merged file). Follows HTA's trace parser: GPU kernels are `ph:'X'` events with
// cat 'kernel'; a kernel whose name contains 'nccl' is communication, any other is compute.
// Malformed input → ImportError naming the file, event index and field.

import { ImportError, err, ok, type Result } from '../errors';
import { TRACE_FORMAT, MEMORY_COUNTER } from './chrome_export';
import type { EventKind, MemoryCurve, StreamName, TraceEvent } from './event';
import { fail, isObject, readInt, readNumber, readObject, readString, readTid, type Json } from './import_fields';

export interface ImportedTrace {
  readonly events: readonly TraceEvent[];
  readonly memory?: readonly MemoryCurve[];
  readonly worldSize: number;
  readonly source: 'fsdp-sim' | 'kineto';
  /** What was read but not represented (e.g. AllReduce kernels): said, not swallowed. */
  readonly warnings: readonly string[];
}

const MAX_RANK = 65535;
const EVENT_KINDS: ReadonlySet<string> = new Set<EventKind>(['compute', 'all_gather', 'reduce_scatter', 'wait']);

interface FileParse {
  events: TraceEvent[];
  memory: Map<number, [number, number][]>; // rank → (t, bytes)
  worldSize: number;
  ours: boolean;
  ranks: Set<number>;
  skipped: Map<string, number>; // NCCL kernels we cannot represent, by name
}

/** A Chrome trace in JSON Object Format, JSON Array Format, or JSON text of either. */
function asTraceObject(file: unknown, where: string): Json {
  let x = file;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch (e) {
      throw new ImportError(where, `${where} is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (Array.isArray(x)) return { traceEvents: x };
  if (!isObject(x)) fail(where, 'a Chrome trace object {traceEvents: [...]}', x);
  if (!Array.isArray(x.traceEvents)) fail(`${where}.traceEvents`, 'an array of trace events', x.traceEvents);
  return x;
}

function ncclKind(name: string): 'all_gather' | 'reduce_scatter' | undefined {
  const n = name.toLowerCase();
  if (n.includes('allgather') || n.includes('all_gather')) return 'all_gather';
  if (n.includes('reducescatter') || n.includes('reduce_scatter')) return 'reduce_scatter';
  return undefined;
}

function parseFile(raw: unknown, fileIndex: number, fileCount: number): FileParse {
  const fw = fileCount > 1 ? `file[${fileIndex}]` : 'trace';
  const t = asTraceObject(raw, fw);
  const ours = isObject(t.fsdpSim) && t.fsdpSim.format === TRACE_FORMAT;
  let distRank: number | undefined;
  let worldSize = 0;
  if (t.distributedInfo !== undefined) {
    const di = readObject(t, 'distributedInfo', fw);
    if (di.rank !== undefined) distRank = readInt(di, 'rank', `${fw}.distributedInfo`, 0, MAX_RANK);
    if (di.world_size !== undefined) worldSize = readInt(di, 'world_size', `${fw}.distributedInfo`, 1, MAX_RANK + 1);
  }
  const evs = t.traceEvents as unknown[];
  // which pids hold GPU kernels: one → a per-rank file, several → a merged file (pid = rank)
  const gpuPids = new Set<unknown>();
  for (const e of evs) if (isObject(e) && e.ph === 'X' && typeof e.cat === 'string' && e.cat.toLowerCase() === 'kernel') gpuPids.add(e.pid);
  const merged = gpuPids.size > 1;
  const rankOf = (e: Json, w: string): number => {
    if (!merged && distRank !== undefined) return distRank;
    if (!merged && fileCount > 1) return fileIndex;
    return readInt(e, 'pid', w, 0, MAX_RANK);
  };

  const out: FileParse = { events: [], memory: new Map(), worldSize, ours, ranks: new Set(), skipped: new Map() };
  const addMem = (rank: number, ts: number, bytes: number) => {
    const list = out.memory.get(rank) ?? [];
    list.push([ts, bytes]);
    out.memory.set(rank, list);
  };
  evs.forEach((e, i) => {
    const w = `${fw}.traceEvents[${i}]`;
    if (!isObject(e)) fail(w, 'an object', e);
    const ph = readString(e, 'ph', w);
    if (ph === 'C' && e.name === MEMORY_COUNTER) {
      const args = readObject(e, 'args', w);
      addMem(rankOf(e, w), readNumber(e, 'ts', w), readNumber(args, 'bytes', `${w}.args`, 0));
      return;
    }
    if (ph === 'i' && e.name === '[memory]' && isObject(e.args) && e.args['Device Type'] === 1) {
      // Kineto's allocator record (profile_memory=True): one per alloc/free on a CUDA device
      const rank = distRank ?? readInt(e.args, 'Device Id', `${w}.args`, 0, MAX_RANK);
      addMem(rank, readNumber(e, 'ts', w), readNumber(e.args, 'Total Allocated', `${w}.args`, 0));
      return;
    }
    if (ph !== 'X') return;
    const cat = typeof e.cat === 'string' ? e.cat.toLowerCase() : '';
    const own = ours && isObject(e.args) && isObject(e.args.fsdp_sim) ? e.args.fsdp_sim : undefined;
    if (cat !== 'kernel' && !(own && cat === 'cuda_sync')) return; // CPU ops, runtime calls, memcpy
    const name = readString(e, 'name', w);
    const start = readNumber(e, 'ts', w);
    const dur = readNumber(e, 'dur', w, 0);
    const rank = rankOf(e, w);
    const tid = readTid(e, w);
    out.ranks.add(rank);
    if (own) {
      const ow = `${w}.args.fsdp_sim`;
      const kind = readString(own, 'kind', ow);
      if (!EVENT_KINDS.has(kind)) fail(`${ow}.kind`, `one of [${[...EVENT_KINDS].join(', ')}]`, kind);
      const stream = readString(own, 'stream', ow);
      if (stream !== 'compute' && !stream.startsWith('comm:')) fail(`${ow}.stream`, "'compute' or 'comm:<group>'", stream);
      const ev: { -readonly [K in keyof TraceEvent]: TraceEvent[K] } = {
        rank, stream: stream as StreamName, name: readString(own, 'name', ow), kind: kind as EventKind, start, dur,
      };
      if (own.bucketId !== undefined) ev.bucketId = readInt(own, 'bucketId', ow, 0, Number.MAX_SAFE_INTEGER);
      if (own.bytes !== undefined) ev.bytes = readNumber(own, 'bytes', ow, 0);
      if (own.op !== undefined) ev.op = readString(own, 'op', ow);
      if (own.params !== undefined) {
        const p = own.params;
        if (!Array.isArray(p) || !p.every((x) => typeof x === 'string')) fail(`${ow}.params`, 'an array of strings', p);
        ev.params = p as string[];
      }
      out.events.push(ev);
      return;
    }
    if (/nccl/i.test(name)) {
      const kind = ncclKind(name);
      if (!kind) {
        out.skipped.set(name, (out.skipped.get(name) ?? 0) + 1);
        return;
      }
      out.events.push({ rank, stream: `comm:stream${tid}`, name, kind, start, dur });
      return;
    }
    out.events.push({ rank, stream: 'compute', name, kind: 'compute', start, dur });
  });
  return out;
}

/**
 * Read one trace file or several (one per rank). Each may be a parsed object or JSON text.
 * Kineto times are shifted so the earliest kernel over all ranks starts at 0 (relative timing
 * between ranks is kept); our own export keeps its times.
 */
export function importTrace(input: unknown): Result<ImportedTrace, ImportError> {
  try {
    const files = Array.isArray(input) && !input.every((x) => isObject(x) && 'ph' in x) ? input : [input];
    if (files.length === 0) throw new ImportError('files', 'files must hold at least one trace, got an empty list');
    const parsed = files.map((f, i) => parseFile(f, i, files.length));
    const seen = new Map<number, number>();
    parsed.forEach((p, i) => {
      for (const r of p.ranks) {
        const j = seen.get(r);
        if (j !== undefined && j !== i) throw new ImportError(`file[${i}]`, `file[${i}] holds rank ${r}, which file[${j}] also holds; give one file per rank (distributedInfo.rank)`);
        seen.set(r, i);
      }
    });
    let events = parsed.flatMap((p) => p.events);
    if (events.length === 0) {
      throw new ImportError('traceEvents', 'traceEvents holds no GPU kernels (ph "X", cat "kernel"); was the trace recorded with ProfilerActivity.CUDA?');
    }
    const ours = parsed.every((p) => p.ours);
    const memPoints = new Map<number, [number, number][]>();
    for (const p of parsed) for (const [r, pts] of p.memory) memPoints.set(r, [...(memPoints.get(r) ?? []), ...pts]);
    let origin = 0;
    if (!ours) {
      origin = Math.min(...events.map((e) => e.start));
      events = events.map((e) => ({ ...e, start: e.start - origin }));
    }
    events.sort((a, b) => a.rank - b.rank || a.start - b.start || a.stream.localeCompare(b.stream));
    const memory: MemoryCurve[] = [...memPoints.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([rank, pts]) => {
        const sorted = [...pts].sort((a, b) => a[0] - b[0]);
        return { rank, t: sorted.map((p) => p[0] - origin), bytes: sorted.map((p) => p[1]), peakBytes: Math.max(0, ...sorted.map((p) => p[1])) };
      });
    const maxRank = Math.max(...events.map((e) => e.rank), ...memory.map((m) => m.rank));
    const worldSize = Math.max(maxRank + 1, ...parsed.map((p) => p.worldSize));
    const warnings: string[] = [];
    const skipped = new Map<string, number>();
    for (const p of parsed) for (const [n, c] of p.skipped) skipped.set(n, (skipped.get(n) ?? 0) + c);
    for (const [n, c] of skipped) warnings.push(`skipped ${c} NCCL kernel(s) '${n}': only AllGather and ReduceScatter are modelled`);
    return ok({ events, ...(memory.length ? { memory } : {}), worldSize, source: ours ? 'fsdp-sim' : 'kineto', warnings });
  } catch (e) {
    if (e instanceof ImportError) return err(e);
    throw e;
  }
}
