// Holistic Trace Analysis' definitions, ported for Kineto traces (facebookresearch/
// HolisticTraceAnalysis: hta/common/trace.py `_filter_irrelevant_gpu_kernels`, hta/common/
// trace_filter.py GPUKernelFilter, hta/common/types.py patterns, hta/utils/utils.py
// get_kernel_type). What HTA analyses of a rank, and how it names each GPU event's category:
// - a GPU event has args.stream ≥ 0 and args.correlation ≥ 0 (kernels, memcpy, memset, CUDA sync,
//   MTIA ccp events), or is an 'Event Sync' / 'Context Sync'; every other 'X' event is CPU work;
// - times are whole µs, rounded down (HTA reads ts/dur as int64);
// - the window: GPU events launched (same correlation) by CPU events that start before the last
//   ProfilerStep#N starts, so the last iteration is dropped; with 0 or 1 ProfilerStep, CPU events
//   up to the last step's end; a trace without CPU events is kept whole. MTIA traces keep the
//   events correlated with CPU work inside [first step start, last step end];
// - category by kernel name: communication, memory, else computation; CUDA sync events and other
//   non-compute names ('…Sync') are neither, and count as non-compute GPU time.

import { bisector } from 'd3-array';
import type { CommKind } from './kinds';

/** HTA's communication kernels: NCCL/RCCL (`nccl…`, `…ncclKernel…`), HIP and HCCL collectives. */
const COMM_RE = /^nccl|ncclKernel|^hip|^hccl/;
/** HTA's memory kernels (MemoryKernelGroupingPattern). */
const MEMORY_RE = /^(hip)?Memcpy|^(hip)?Memset|^dma/;
/** Names HTA never counts as computation (ComputeKernelGroupingPattern, inverse). */
const NON_COMPUTE_RE = /^nccl|Memcpy|Memset|dma|^.*Sync|cuda.*LaunchKernel|^runFunction/;
const PROFILER_STEP_RE = /^ProfilerStep#(\d+)/;
const SYNC_BY_NAME: ReadonlySet<string> = new Set(['Event Sync', 'Context Sync']);

export type HtaCategory = 'compute' | 'communication' | 'memory' | 'sync';

/** HTA's category of a GPU event by its name (and Kineto category, for cuda_sync events). */
export function htaCategory(name: string, cat: string): HtaCategory {
  if (COMM_RE.test(name)) return 'communication';
  if (MEMORY_RE.test(name) || cat.startsWith('gpu_mem')) return 'memory';
  if (cat === 'cuda_sync' || NON_COMPUTE_RE.test(name)) return 'sync';
  return 'compute';
}

/**
 * Which collective a communication kernel runs: Kineto's 'Collective name' arg when the profiler
 * wrote one, else NCCL's kernel name (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_SendRecv…).
 * Kernels that name no known collective are send/recv: NCCL runs all-to-all, gather and scatter as
 * grouped point-to-point kernels.
 */
export function commKindOf(name: string, collectiveArg?: unknown): CommKind {
  const c = typeof collectiveArg === 'string' ? collectiveArg.toLowerCase() : '';
  const n = `${c} ${name.toLowerCase()}`;
  if (/all_?to_?all/.test(n)) return 'all_to_all';
  if (/all_?gather/.test(n)) return 'all_gather';
  if (/reduce_?scatter/.test(n)) return 'reduce_scatter';
  if (/all_?reduce/.test(n)) return 'all_reduce';
  if (/broadcast/.test(n)) return 'broadcast';
  return 'send_recv';
}

/** One 'X' event as HTA holds it: whole µs, stream and correlation (−1 when absent). */
export interface RawEvent {
  readonly name: string;
  readonly cat: string;
  readonly ts: number;
  readonly dur: number;
  readonly stream: number;
  readonly correlation: number;
  /** Kineto's 'Collective name' arg of a communication kernel, when the profiler wrote one. */
  readonly collective?: unknown;
}

const isGpuEvent = (e: RawEvent): boolean => (e.stream >= 0 && e.correlation >= 0) || SYNC_BY_NAME.has(e.name);

const profilerStep = (name: string): number | undefined => {
  const m = PROFILER_STEP_RE.exec(name);
  return m ? Number(m[1]) : undefined;
};

export interface Window {
  /** Positions (in the events given) of the GPU events HTA analyses. */
  readonly kept: readonly number[];
  /** iteration (ProfilerStep number) of each kept GPU event, −1 when no step encloses its launch. */
  readonly iteration: readonly number[];
  readonly warnings: readonly string[];
  /** GPU events left out because no CPU event in the window launched them (or they ran in the last step). */
  readonly outside?: number;
}

interface Step {
  readonly n: number;
  readonly ts: number;
  readonly end: number;
}

/** The ProfilerStep#N iteration a CPU timestamp falls in (steps sorted by start), or −1. */
function stepAt(steps: readonly Step[], ts: number): number {
  const found = bisector((s: Step) => s.ts).right(steps, ts) - 1; // the last step starting at or before ts
  return found >= 0 && ts <= steps[found].end ? steps[found].n : -1;
}

/** HTA's analysis window of one rank (see the header). `mtia`: the trace holds MTIA events. */
export function htaWindow(events: readonly RawEvent[], mtia: boolean): Window {
  const cpu: RawEvent[] = [];
  for (const e of events) if (!isGpuEvent(e)) cpu.push(e);
  const warnings: string[] = [];
  const steps: Step[] = [];
  for (const e of cpu) {
    const n = profilerStep(e.name);
    if (n !== undefined) steps.push({ n, ts: e.ts, end: e.ts + e.dur });
  }
  steps.sort((a, b) => a.ts - b.ts);
  if (cpu.length === 0) return wholeWindow(events, warnings);
  let keep: (e: RawEvent) => boolean;
  if (mtia && steps.length > 0) {
    const t0 = steps[0].ts;
    const t1 = steps.reduce((m, s) => Math.max(m, s.end), -Infinity);
    keep = (e) => e.ts >= t0 && e.ts + e.dur <= t1;
  } else if (steps.length > 1) {
    const lastStart = steps[steps.length - 1].ts;
    keep = (e) => e.ts < lastStart; // the last ProfilerStep is dropped, as HTA does by default
  } else {
    warnings.push(
      steps.length === 0
        ? 'ProfilerStep not found in the trace: the whole trace is analysed (as HTA does)'
        : 'only one iteration (ProfilerStep) in the trace: it is analysed whole (as HTA does)',
    );
    let end = steps.length ? steps[0].end : -Infinity;
    if (!steps.length) for (const e of cpu) end = Math.max(end, e.ts + e.dur);
    keep = (e) => e.ts <= end;
  }
  const launchTs = new Map<number, number>(); // correlation → CPU launch time
  for (const e of cpu) if (keep(e) && !launchTs.has(e.correlation)) launchTs.set(e.correlation, e.ts);
  const kept: number[] = [];
  const iteration: number[] = [];
  let total = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    // HTA's breakdown takes every kept row with a stream: GPU events matched to a launch, and
    // stream events without a correlation (memcpy) that fell on the CPU side of its filter
    if (e.stream < 0) continue;
    total++;
    const t = isGpuEvent(e) ? launchTs.get(e.correlation) : keep(e) ? e.ts : undefined;
    if (t === undefined) continue;
    kept.push(i);
    iteration.push(stepAt(steps, t));
  }
  const dropped = total - kept.length;
  if (dropped > 0)
    warnings.push(`${dropped} GPU event(s) outside HTA's window (the last ProfilerStep, or no CPU launch) left out`);
  return { kept, iteration, warnings, outside: dropped };
}

/** Every event with a stream, no iterations: a trace without CPU events, or a merged file. */
export function wholeWindow(events: readonly RawEvent[], warnings: string[] = []): Window {
  const kept: number[] = [];
  for (let i = 0; i < events.length; i++) if (events[i].stream >= 0 || isGpuEvent(events[i])) kept.push(i);
  return { kept, iteration: kept.map(() => -1), warnings };
}
