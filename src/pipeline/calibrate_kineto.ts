// What calibration reads from Kineto traces (the JSON torch.profiler writes, one file per rank, or
// one merged file with pid = rank as fsdp-sim exports): each collective kernel with what the trace
// says of its size and group (calibrate_comms.ts: kernel args, record_param_comms, nccl:* ops),
// the time of compute kernels per op class, and the ProfilerStep#N count. Times are read with the
// trace importer's field readers, so a malformed ts / dur is refused naming the event and field.
// Linear in the events: no spread of an unbounded list, each list grown in place.

import { ImportError, err, ok, type Result } from '../errors';
import {
  htaCategory,
  checkOneRun,
  runIdentity,
  type RunIdentity,
  MAX_RANK,
  fileRank,
  DROPPED,
  type Keep,
} from '../trace';
import { fail, isObject, type Json, MAX_TRACE_US, readInt, readSpan, readString, readTs } from '../trace';
import { type OpClass, opClassOfKernel, opClassOfOp } from './calibrate_classes';
import { type LeftOutReason, reasonKey } from './calibrate_reasons';
import {
  type CalibKind,
  type CommInfo,
  type CpuOp,
  calibKindOf,
  commInfoOf,
  infoAtLaunches,
  kindLabel,
  type Launch,
  mergeInfo,
} from './calibrate_comms';

export { MAX_RANK, opClassOfKernel, type OpClass };

/** One collective kernel with what its trace says of it (fields may be missing: calibrate.ts resolves them). */
export interface RawCollective {
  readonly rank: number;
  readonly name: string;
  readonly kind: CalibKind;
  readonly info: CommInfo;
  readonly durUs: number;
}

/** Communication kernels the fit leaves out, counted by kind, group and reason (src/words/ words it). */
export interface LeftOut {
  readonly kind: string;
  readonly group: string;
  readonly count: number;
  readonly reason: LeftOutReason;
}

export interface TraceSamples {
  readonly collectives: readonly RawCollective[];
  /** Compute kernel time over every rank and step, µs, per op class. */
  readonly classUs: Readonly<Record<OpClass, number>>;
  readonly kernels: number;
  /** ProfilerStep#N annotations per rank (1 when there are none): kernel totals are per step over these. */
  readonly steps: number;
  readonly ranks: number;
  /** The highest rank in the files (checked against the config's ranks). */
  readonly maxRank: number;
  /** distributedInfo.world_size, when the files state it (one value: checked). */
  readonly worldSize?: number;
  readonly left: readonly LeftOut[];
  readonly warnings: readonly string[];
}

/** LeftOut entries grown by key (a Map: kinds and groups are user strings). */
export class LeftOutTally {
  private readonly m = new Map<string, { kind: string; group: string; count: number; reason: LeftOutReason }>();
  add(kind: string, group: string, reason: LeftOutReason, n = 1): void {
    const k = `${kind}\u0000${group}\u0000${reasonKey(reason)}`;
    const e = this.m.get(k);
    if (e) e.count += n;
    else this.m.set(k, { kind, group, count: n, reason });
  }
  list(): LeftOut[] {
    return [...this.m.values()];
  }
}

const NO_RING: LeftOutReason = { code: 'no_ring' };

interface FileRead {
  readonly collectives: RawCollective[];
  readonly ranks: Set<number>;
  readonly steps: number;
  readonly kernels: number;
  readonly identity: RunIdentity;
}

const threadKey = (e: Json): string => `${e.pid}|${e.tid}`;

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** ts and dur of an 'X' event, checked as the importer checks them (its readSpan names the field). */
function span(e: Json, where: () => string): { ts: number; dur: number } {
  const { ts, dur } = e;
  // the fast path checks what readSpan does: 0 ≤ ts, dur ≥ 0, ts + dur < 2^53 µs
  const good =
    typeof ts === 'number' &&
    ts >= 0 &&
    ts < MAX_TRACE_US &&
    (dur === undefined || (typeof dur === 'number' && dur >= 0 && ts + dur < MAX_TRACE_US));
  return good ? { ts, dur: (dur as number | undefined) ?? 0 } : readSpan(e, where(), 0);
}

interface Scan {
  readonly ops: Map<string, CpuOp[]>;
  readonly launches: Map<string, Launch[]>;
  readonly comm: { e: Json; i: number; dur: number }[];
  readonly flowEnds: Map<string, number>; // `pid|tid|ts` of a kernel → ac2g flow id
  readonly gpuPids: Map<unknown, number>; // pid of GPU events → the first one's index
  steps: number;
  stepPids: Set<unknown>;
  kernels: number;
}

/** HTA's category of a kernel name, and a compute kernel's op class (null: memory or sync). */
function kernelClass(name: string): OpClass | 'communication' | null {
  const cat = htaCategory(name, 'kernel');
  return cat === 'communication' ? cat : cat === 'compute' ? opClassOfKernel(name) : null;
}

const isLaunchCat = (cat: unknown): boolean => cat === 'cuda_runtime' || cat === 'cuda_driver';
const isKernelCat = (cat: unknown): boolean => typeof cat === 'string' && cat.toLowerCase() === 'kernel';

const pick = (o: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
};

/**
 * What `scan` reads of an event, for a streamed file (trace/trace_stream.ts): ac2g flow ends;
 * 'X' events' ph, cat, name, ts, dur, pid, tid, with the whole args of communication kernels and ops
 * (record_param_comms, nccl:*), else only args.correlation and args.fsdp_sim. Malformed: kept as is.
 */
export const calibrateKeep: Keep = (e, intern) => {
  if (!isObject(e)) return e;
  if (e.ph === 's' || e.ph === 'f')
    return e.cat === 'ac2g' ? pick(e, ['ph', 'cat', 'id', 'pid', 'tid', 'ts']) : DROPPED;
  if (e.ph !== 'X') return DROPPED;
  const out = pick(e, ['ph', 'ts', 'dur', 'pid', 'tid']);
  const name = e.name;
  if (name !== undefined) out.name = typeof name === 'string' ? intern(name) : name;
  if (e.cat !== undefined) out.cat = typeof e.cat === 'string' ? intern(e.cat) : e.cat;
  const args = e.args;
  if (args === undefined) return out;
  const comm =
    typeof name === 'string' &&
    (name === 'record_param_comms' ||
      name.startsWith('nccl:') ||
      (isKernelCat(e.cat) && kernelClass(name) === 'communication'));
  out.args = isObject(args) && !comm ? pick(args, ['correlation', 'fsdp_sim']) : args;
  return out;
};

/** One pass over a file's events: comm CPU ops and launches per thread, comm kernels, compute time. */
function scan(evs: readonly unknown[], fw: string, classUs: Record<OpClass, number>): Scan {
  const s: Scan = {
    ops: new Map(),
    launches: new Map(),
    comm: [],
    flowEnds: new Map(),
    gpuPids: new Map(),
    steps: 0,
    stepPids: new Set(),
    kernels: 0,
  };
  const classes = new Map<string, OpClass | 'communication' | null>(); // few names repeat: classify each once
  const flowStarts = new Map<number, { key: string; ts: number }>();
  for (let i = 0; i < evs.length; i++) {
    const e = evs[i];
    const where = () => `${fw}.traceEvents[${i}]`;
    if (!isObject(e)) fail(where(), 'an object', e);
    if ((e.ph === 's' || e.ph === 'f') && e.cat === 'ac2g' && Number.isInteger(e.id)) {
      const ts = readTs(e, where());
      if (e.ph === 's') flowStarts.set(e.id as number, { key: threadKey(e), ts });
      else s.flowEnds.set(`${threadKey(e)}|${ts}`, e.id as number);
      continue;
    }
    if (e.ph !== 'X') continue;
    const name = typeof e.name === 'string' ? e.name : readString(e, 'name', where());
    const { ts, dur } = span(e, where);
    const args = isObject(e.args) ? e.args : undefined;
    if (isKernelCat(e.cat)) {
      if (!s.gpuPids.has(e.pid)) s.gpuPids.set(e.pid, i);
      let cls = classes.get(name);
      if (cls === undefined) classes.set(name, (cls = kernelClass(name)));
      if (cls === 'communication') s.comm.push({ e, i, dur });
      else if (cls !== null) {
        const own = args && isObject(args.fsdp_sim) ? args.fsdp_sim.op : undefined;
        classUs[typeof own === 'string' ? opClassOfOp(own) : cls] += dur;
        s.kernels++;
      }
    } else if (isLaunchCat(e.cat) && Number.isInteger(args?.correlation)) {
      push(s.launches, threadKey(e), { ts, correlation: args!.correlation as number });
    } else if (name === 'record_param_comms' || name.startsWith('nccl:')) {
      push(s.ops, threadKey(e), { ts, end: ts + dur, info: commInfoOf(args, name) });
    } else if (/^ProfilerStep#\d+$/.test(name)) {
      s.steps++;
      s.stepPids.add(e.pid);
    }
  }
  // a launch known by its ac2g flow only (no correlation on the kernel): keyed −1 − flow id
  for (const [id, st] of flowStarts) push(s.launches, st.key, { ts: st.ts, correlation: -1 - id });
  return s;
}

/** The collectives of one rank file (or merged file), and its compute time into `classUs`. */
function readFile(
  json: unknown,
  index: number,
  count: number,
  file: string,
  classUs: Record<OpClass, number>,
  left: LeftOutTally,
  warnings: string[],
): FileRead {
  if (!isObject(json) || !Array.isArray(json.traceEvents))
    throw new ImportError(file, `${file}: not a Kineto trace (no traceEvents array)`);
  const s = scan(json.traceEvents, file, classUs);
  // a rank that ran nothing would count in the per-rank average (its classes' time halved at 2 ranks)
  if (s.gpuPids.size === 0)
    throw new ImportError(
      file,
      `${file}: traceEvents holds no GPU kernels (ph "X" events of cat kernel); ` +
        'was the trace recorded with ProfilerActivity.CUDA?',
    );
  const merged = s.gpuPids.size > 1; // one file, several GPUs: pid = rank
  const own = merged ? 0 : fileRank(json, file, index, count, warnings);
  const viaLaunch = new Map<number, CommInfo>();
  for (const [k, ops] of s.ops) infoAtLaunches(ops, s.launches.get(k) ?? [], viaLaunch);
  const ranks = new Set<number>(merged ? [] : [own]);
  const evs = json.traceEvents as Json[];
  if (merged)
    for (const i of s.gpuPids.values()) ranks.add(readInt(evs[i], 'pid', `${file}.traceEvents[${i}]`, 0, MAX_RANK));
  const collectives: RawCollective[] = [];
  for (const { e, i, dur } of s.comm) {
    const rank = merged ? readInt(e, 'pid', `${file}.traceEvents[${i}]`, 0, MAX_RANK) : own;
    ranks.add(rank);
    const args = isObject(e.args) ? e.args : undefined;
    const name = e.name as string;
    const flow = s.flowEnds.get(`${threadKey(e)}|${e.ts}`);
    const corr = Number.isInteger(args?.correlation)
      ? (args!.correlation as number)
      : flow === undefined
        ? Number.NaN
        : -1 - flow;
    const info = mergeInfo(commInfoOf(args), viaLaunch.get(corr));
    const kind = calibKindOf(info.op ?? '') ?? calibKindOf(name);
    if (kind) collectives.push({ rank, name, kind, info, durUs: dur });
    else left.add(kindLabel(info.op, name), info.group ?? 'default', NO_RING);
  }
  const steps = Math.max(1, Math.round(s.steps / Math.max(1, s.stepPids.size)));
  return { collectives, ranks, steps, kernels: s.kernels, identity: runIdentity(json, file) };
}

/** Two files of one rank are refused, naming both (as the trace importer refuses them). */
function checkDistinct(reads: readonly FileRead[]): void {
  const seen = new Map<number, number>();
  reads.forEach((r, i) => {
    for (const rank of r.ranks) {
      const j = seen.get(rank);
      if (j !== undefined && j !== i) {
        const [a, b] = [reads[j].identity.where, r.identity.where];
        const what =
          a === b
            ? `${b} is given twice (file ${j + 1} and ${i + 1})`
            : `${b} holds rank ${rank}, which ${a} also holds`;
        throw new ImportError(b, `${what}; give one file per rank (distributedInfo.rank)`);
      }
      seen.set(rank, i);
    }
  });
}

/**
 * Calibration's reading of a run's rank files, one file at a time and in order, so a streamed file
 * is read as soon as it arrives and only its samples stay (trace/trace_stream.ts). After a file's
 * error the rest are not read; `result()` returns it.
 */
export class TraceSampleReader {
  private readonly classUs: Record<OpClass, number> = { matmul: 0, attention: 0, elementwise: 0 };
  private readonly left = new LeftOutTally();
  private readonly warnings: string[] = [];
  private readonly reads: FileRead[] = [];
  private error?: ImportError;

  constructor(private readonly count: number) {}

  /** The next file (parsed JSON, or what calibrateKeep kept of it). */
  add(name: string, json: unknown): void {
    if (this.error) return;
    try {
      const i = this.reads.length;
      this.reads.push(readFile(json, i, this.count, name, this.classUs, this.left, this.warnings));
    } catch (e) {
      if (e instanceof ImportError) this.error = e;
      else throw e;
    }
  }

  result(): Result<TraceSamples, ImportError> {
    if (this.error) return err(this.error);
    const reads = this.reads;
    try {
      checkDistinct(reads);
      const ranks: { where: string; rank: number }[] = [];
      for (const r of reads) for (const rank of r.ranks) ranks.push({ where: r.identity.where, rank });
      checkOneRun(
        reads.map((r) => r.identity),
        ranks,
      );
      const collectives: RawCollective[] = [];
      for (const r of reads) for (const c of r.collectives) collectives.push(c);
      const worldSize = reads.find((r) => r.identity.worldSize !== undefined)?.identity.worldSize;
      return ok({
        collectives,
        classUs: this.classUs,
        kernels: reads.reduce((t, r) => t + r.kernels, 0),
        steps: reads.reduce((m, r) => Math.max(m, r.steps), 1),
        ranks: Math.max(1, ranks.length),
        maxRank: ranks.reduce((m, r) => Math.max(m, r.rank), 0),
        ...(worldSize !== undefined ? { worldSize } : {}),
        left: this.left.list(),
        warnings: this.warnings,
      });
    } catch (e) {
      if (e instanceof ImportError) return err(e);
      throw e;
    }
  }
}

/** Samples of a run's rank files (parsed JSON, in rank order unless each names its rank). */
export function traceSamples(
  files: readonly { readonly name: string; readonly json: unknown }[],
): Result<TraceSamples, ImportError> {
  const reader = new TraceSampleReader(files.length);
  for (const f of files) reader.add(f.name, f.json);
  return reader.result();
}
