// Chrome Trace Event export (the JSON Perfetto, chrome://tracing and Holistic Trace Analysis read),
// shaped like a Kineto trace from the PyTorch profiler: pid = rank (GPU), tid = stream,
// `ph:'X'` kernels with cat 'kernel', NCCL-named communication kernels, `M` metadata for names,
// `C` counters for memory, `distributedInfo: {rank, world_size}`. Reference: Trace Event Format
// (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU), HTA trace parser.

import type { MemoryCurve, StreamName, TraceEvent } from './event';
import { isCommKind, type CommKind } from './kinds';
import { commGroupOf } from './stream';

export const TRACE_FORMAT = 'fsdp-sim trace v1';
const COMPUTE_TID = 7; // CUDA's default stream id in Kineto traces
const FIRST_COMM_TID = 20; // comm streams, one per process group, sorted by name
export const MEMORY_COUNTER = 'GPU Memory Allocated';

export interface ChromeEvent {
  readonly ph: 'X' | 'M' | 'C' | 's' | 'f';
  readonly name: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number; // µs, 3 decimals
  readonly dur?: number; // µs, 3 decimals
  readonly cat?: string;
  readonly args?: Readonly<Record<string, unknown>>;
  /** Flow events ('s' start, 'f' finish): the id pairing them, and 'e' = bind to the enclosing slice. */
  readonly id?: number;
  readonly bp?: 'e';
}

export interface ChromeTrace {
  readonly traceEvents: readonly ChromeEvent[];
  readonly displayTimeUnit: 'ms';
  readonly distributedInfo: { readonly rank: number; readonly world_size: number };
  /** Marks our own export, so import restores streams, names and buckets exactly. */
  readonly fsdpSim: {
    readonly format: string;
    readonly ranks: readonly number[];
    readonly label?: string;
    /** Identifies the run (backend + config): the importer refuses files of different runs. */
    readonly run?: string;
    /** Anything a reader must know, e.g. that only some of the world's ranks are in the file. */
    readonly note?: string;
  };
}

export interface TraceInput {
  readonly events: readonly TraceEvent[];
  readonly memory?: readonly MemoryCurve[];
  readonly worldSize: number;
}

export interface ExportOptions {
  /** Only this rank (one file per rank); default: every rank in one merged file. */
  readonly rank?: number;
  /** dtype of reduce-scatters, for the NCCL kernel name (`..._Sum_f32_...`). */
  readonly reduceDtype?: 'fp32' | 'bf16' | 'fp16';
  /** Bucket members by bucket id, written into the comm kernels' args. */
  readonly buckets?: readonly { readonly id: number; readonly members: readonly string[] }[];
  readonly label?: string;
  readonly run?: string;
  readonly note?: string;
  /**
   * Wait node → the collective node it completes (the schedule's `waitOf`): each wait that blocked
   * gets a flow arrow from its collective's start to the wait, as Perfetto draws flows.
   */
  readonly waitOf?: Readonly<Record<string, string>>;
}

/** `ExportOptions.waitOf` of a (scheduled) graph: each wait node's collective. */
export function waitOfGraph(graph: {
  readonly nodes: readonly { readonly name: string; readonly waitOf?: string }[];
}): Record<string, string> {
  return Object.fromEntries(graph.nodes.filter((n) => n.waitOf !== undefined).map((n) => [n.name, n.waitOf!]));
}

/** Category and name of the collective → wait flows. */
export const WAIT_FLOW = { cat: 'fsdp_sim_wait', name: 'collective → wait' } as const;

/**
 * A flow from each collective to the wait that blocked on it, per rank: 's' on the collective's
 * stream at its start, 'f' on the compute stream at the wait's start, both bound to the slice there.
 */
function waitFlows(
  events: readonly TraceEvent[],
  tids: ReadonlyMap<StreamName, number>,
  waitOf: Readonly<Record<string, string>>,
): ChromeEvent[] {
  const comm = new Map<string, TraceEvent>(); // rank|name → collective event
  for (const e of events) {
    const key = `${e.rank}|${e.name}`;
    if (isCommKind(e.kind) && !comm.has(key)) comm.set(key, e);
  }
  const out: ChromeEvent[] = [];
  let id = 1;
  for (const w of events) {
    // own keys only: an imported graph may name a node `constructor`
    const target = w.kind === 'wait' && Object.hasOwn(waitOf, w.name) ? waitOf[w.name] : undefined;
    const coll = target === undefined ? undefined : comm.get(`${w.rank}|${target}`);
    if (!coll) continue;
    const at = (t: number) => Math.round(t * 1000) / 1000;
    const from = tids.get(coll.stream) ?? FIRST_COMM_TID;
    const to = tids.get(w.stream) ?? COMPUTE_TID;
    out.push({ ph: 's', ...WAIT_FLOW, id, pid: w.rank, tid: from, ts: at(coll.start) });
    out.push({ ph: 'f', bp: 'e', ...WAIT_FLOW, id, pid: w.rank, tid: to, ts: at(w.start) });
    id++;
  }
  return out;
}

const NCCL_DTYPE = { fp32: 'f32', bf16: 'bf16', fp16: 'f16' } as const;
const NCCL_ARGS = '(ncclDevComm*, unsigned long, ncclWork*)';

/** NCCL's kernel name for a collective, as Kineto records it (HTA classifies by the `nccl` prefix). */
export function ncclKernelName(kind: CommKind, reduceDtype: keyof typeof NCCL_DTYPE = 'fp32'): string {
  const dt = NCCL_DTYPE[reduceDtype];
  const op = {
    all_gather: 'AllGather_RING_LL',
    reduce_scatter: `ReduceScatter_Sum_${dt}_RING_LL`,
    all_reduce: `AllReduce_Sum_${dt}_RING_LL`,
    broadcast: 'Broadcast_RING_LL',
    send_recv: 'SendRecv', // NCCL runs point-to-point and all-to-all as grouped SendRecv kernels
    all_to_all: 'SendRecv',
  }[kind];
  return `ncclDevKernel_${op}${NCCL_ARGS}`;
}

/** torch.distributed's name of each collective (Kineto's 'Collective name' arg): tells all-to-all from send/recv. */
const COLLECTIVE_NAME: Readonly<Record<CommKind, string>> = {
  all_gather: 'all_gather_into_tensor',
  reduce_scatter: 'reduce_scatter_tensor',
  all_reduce: 'allreduce',
  send_recv: 'send',
  broadcast: 'broadcast',
  all_to_all: 'all_to_all',
};

/** ts/dur in µs with 3 decimals, rounding both ends so back-to-back kernels stay back to back. */
function roundSpan(start: number, dur: number): { ts: number; dur: number } {
  const sNs = Math.round(start * 1000);
  const eNs = Math.round((start + dur) * 1000);
  return { ts: sNs / 1000, dur: (eNs - sNs) / 1000 };
}

/** tid of every stream: compute → 7, comm streams → 20, 21, … in name order. */
function streamTids(events: readonly TraceEvent[]): Map<StreamName, number> {
  const comm = [...new Set(events.map((e) => e.stream).filter((s) => s !== 'compute'))].sort();
  const tids = new Map<StreamName, number>([['compute', COMPUTE_TID]]);
  comm.forEach((s, i) => tids.set(s, FIRST_COMM_TID + i));
  return tids;
}

function kernelEvent(
  e: TraceEvent,
  tid: number,
  opts: ExportOptions,
  members: Map<number, readonly string[]>,
  correlation: number,
): ChromeEvent {
  const span = roundSpan(e.start, e.dur);
  const own: Record<string, unknown> = { name: e.name, kind: e.kind, stream: e.stream };
  if (e.bucketId !== undefined) own.bucketId = e.bucketId;
  if (e.params) own.params = e.params;
  if (e.bytes !== undefined) own.bytes = e.bytes;
  if (e.op !== undefined) own.op = e.op;
  // stream and correlation as Kineto writes them: HTA analyses events that carry both
  const args: Record<string, unknown> = { device: e.rank, stream: tid, correlation };
  const x = { ph: 'X' as const, pid: e.rank, tid, ...span };
  if (isCommKind(e.kind)) {
    args['Collective name'] = COLLECTIVE_NAME[e.kind];
    args['Process Group Name'] = commGroupOf(e.stream) ?? '';
    if (e.bytes !== undefined) args.bytes = e.bytes;
    const m = e.bucketId !== undefined ? members.get(e.bucketId) : undefined;
    args['bucket members'] = m ?? [e.name];
    return { ...x, cat: 'kernel', name: ncclKernelName(e.kind, opts.reduceDtype), args: { ...args, fsdp_sim: own } };
  }
  if (e.kind === 'wait') {
    // the compute stream blocked on a collective (Kineto's cudaStreamWaitEvent). It is no GPU work:
    // fsdp-sim's metrics count it nowhere, and stream −1 makes HTA (and our Kineto reader) agree
    return { ...x, cat: 'cuda_sync', name: 'Stream Wait Event', args: { device: e.rank, stream: -1, fsdp_sim: own } };
  }
  if (e.kind === 'memory') {
    const cat = /^Memset/.test(e.name) ? 'gpu_memset' : 'gpu_memcpy';
    return { ...x, cat, name: e.name, args: { ...args, fsdp_sim: own } };
  }
  if (e.kind === 'sync') return { ...x, cat: 'cuda_sync', name: e.name, args: { ...args, fsdp_sim: own } };
  return { ...x, cat: 'kernel', name: e.name, args: { ...args, fsdp_sim: own } };
}

function memoryEvents(m: MemoryCurve): ChromeEvent[] {
  return m.t.map((t, i) => ({
    ph: 'C' as const,
    name: MEMORY_COUNTER,
    pid: m.rank,
    tid: 0,
    ts: Math.round(t * 1000) / 1000,
    args: { bytes: m.bytes[i] },
  }));
}

/** One Chrome trace: every rank merged (pid = rank), or only `opts.rank`. */
export function exportChromeTrace(input: TraceInput, opts: ExportOptions = {}): ChromeTrace {
  const tids = streamTids(input.events);
  const members = new Map((opts.buckets ?? []).map((b) => [b.id, b.members] as const));
  const keep = (r: number) => opts.rank === undefined || r === opts.rank;
  const events = input.events.filter((e) => keep(e.rank));
  const memory = (input.memory ?? []).filter((m) => keep(m.rank));
  const ranks = [...new Set([...events.map((e) => e.rank), ...memory.map((m) => m.rank)])].sort((a, b) => a - b);
  if (opts.rank !== undefined && !ranks.includes(opts.rank)) ranks.push(opts.rank);

  const meta: ChromeEvent[] = [];
  for (const r of ranks) {
    meta.push({ ph: 'M', name: 'process_name', pid: r, tid: 0, args: { name: `rank ${r} (GPU ${r})` } });
    meta.push({ ph: 'M', name: 'process_sort_index', pid: r, tid: 0, args: { sort_index: r } });
    const used = new Set(events.filter((e) => e.rank === r).map((e) => e.stream));
    for (const [stream, tid] of tids) {
      if (!used.has(stream)) continue;
      meta.push({ ph: 'M', name: 'thread_name', pid: r, tid, args: { name: `stream ${tid} (${stream})` } });
      meta.push({ ph: 'M', name: 'thread_sort_index', pid: r, tid, args: { sort_index: tid } });
    }
  }
  // stable order: by rank, then start, then original index (determinism)
  const order = events
    .map((e, i) => [e, i] as const)
    .sort((a, b) => a[0].rank - b[0].rank || a[0].start - b[0].start || a[1] - b[1]);
  const kernels = order.map(([e], i) => kernelEvent(e, tids.get(e.stream) ?? COMPUTE_TID, opts, members, i + 1));
  const counters = memory.flatMap(memoryEvents);
  const flows = opts.waitOf
    ? waitFlows(
        order.map(([e]) => e),
        tids,
        opts.waitOf,
      )
    : [];
  return {
    traceEvents: [...meta, ...kernels, ...counters, ...flows],
    displayTimeUnit: 'ms',
    distributedInfo: { rank: opts.rank ?? ranks[0] ?? 0, world_size: input.worldSize },
    fsdpSim: {
      format: TRACE_FORMAT,
      ranks,
      ...(opts.label ? { label: opts.label } : {}),
      ...(opts.run ? { run: opts.run } : {}),
      ...(opts.note ? { note: opts.note } : {}),
    },
  };
}

/** One Chrome trace per rank (what `torch.profiler` writes: one file per rank), rank order. */
export function exportChromeTraces(input: TraceInput, opts: Omit<ExportOptions, 'rank'> = {}): ChromeTrace[] {
  const ranks = [...new Set([...input.events.map((e) => e.rank), ...(input.memory ?? []).map((m) => m.rank)])].sort(
    (a, b) => a - b,
  );
  return ranks.map((rank) => exportChromeTrace(input, { ...opts, rank }));
}
