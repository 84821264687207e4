// Bench: importing a 1M-kernel trace (issue: the importer overflowed the stack from ~124k kernels).
// Two traces built in memory (no multi-hundred-MB JSON text): a Kineto rank file — 1M GPU kernels
// (every 5th an NCCL all-reduce), a cudaLaunchKernel per kernel, 8 ProfilerSteps, so HTA's window
// and correlation join run in full — and fsdp-sim's own export of 1M events. Each row: import +
// metrics time and the heap it keeps, beside what the old importer's `Math.min(...starts)` does
// with the same kernels (a RangeError) as the baseline. Target: imports, under 10 s.

import { exportChromeTrace } from '../src/trace/chrome_export';
import type { TraceEvent } from '../src/trace/event';
import { importTrace } from '../src/trace/import';
import { computeMetrics } from '../src/trace/metrics';
import { fmt, type Row } from './stats';

export const KERNELS = 1_000_000;
const TARGET_S = 10;
const STEPS = 8;

export interface TraceImportRecord {
  readonly trace: string;
  readonly events: number;
  readonly importS: number;
  readonly metricsS: number;
  readonly heapMiB: number;
  readonly oldImporter: string;
}

function kinetoTrace(n: number): object {
  const traceEvents: object[] = [];
  const perStep = Math.ceil(n / STEPS);
  for (let s = 0; s < STEPS; s++) {
    traceEvents.push({
      ph: 'X',
      cat: 'user_annotation',
      name: `ProfilerStep#${s}`,
      pid: 1,
      tid: 1,
      ts: s * perStep * 10,
      dur: perStep * 10,
      args: {},
    });
  }
  for (let i = 0; i < n; i++) {
    const comm = i % 5 === 0;
    traceEvents.push({
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 1,
      ts: i * 10,
      dur: 2,
      args: { correlation: i },
    });
    traceEvents.push({
      ph: 'X',
      cat: 'kernel',
      name: comm ? 'ncclDevKernel_AllReduce_Sum_f32_RING_LL' : 'gemm',
      pid: 0,
      tid: comm ? 20 : 7,
      ts: i * 10 + 3,
      dur: comm ? 12 : 8,
      args: { device: 0, stream: comm ? 20 : 7, correlation: i },
    });
  }
  return { distributedInfo: { rank: 0, world_size: 1 }, traceEvents };
}

function ownTrace(n: number): object {
  const events: TraceEvent[] = [];
  for (let i = 0; i < n; i++) {
    events.push(
      i % 5 === 0
        ? { rank: 0, stream: 'comm:dp', name: `ag_${i}`, kind: 'all_gather', start: i * 10, dur: 12 }
        : { rank: 0, stream: 'compute', name: `mm_${i}`, kind: 'compute', start: i * 10, dur: 8 },
    );
  }
  return exportChromeTrace({ events, worldSize: 1 });
}

/** What the old importer did with the kernels' start times: spread them into Math.min. */
function oldSpread(n: number): string {
  const starts = Array.from({ length: n }, (_, i) => i);
  try {
    Math.min(...starts);
    return 'ok';
  } catch (e) {
    return (e as Error).name;
  }
}

const heapMiB = () => process.memoryUsage().heapUsed / 2 ** 20;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

function measure(trace: string, build: () => object): TraceImportRecord {
  const input = build();
  gc();
  const h0 = heapMiB();
  const t0 = performance.now();
  const r = importTrace(input);
  const t1 = performance.now();
  if (!r.ok) throw r.error;
  const m = computeMetrics(r.value.events);
  const t2 = performance.now();
  gc(); // what the import keeps (its events) while the file is still held, as the app holds both
  const heap = heapMiB() - h0;
  if (m.perRank.length !== 1) throw new Error('expected one rank');
  return {
    trace,
    events: r.value.events.length,
    importS: (t1 - t0) / 1000,
    metricsS: (t2 - t1) / 1000,
    heapMiB: heap,
    oldImporter: oldSpread(KERNELS),
  };
}

export function benchTraceImport(): { rows: Row[]; records: TraceImportRecord[] } {
  const records = [
    measure('Kineto rank file (+1M launches, 8 ProfilerSteps)', () => kinetoTrace(KERNELS)),
    measure("fsdp-sim's own export", () => ownTrace(KERNELS)),
  ];
  const rows = records.map(
    (r): Row => ({
      section: 'trace',
      case: `import ${KERNELS / 1e6}M kernels: ${r.trace}`,
      value:
        `import ${fmt(r.importS, 2)} s + metrics ${fmt(r.metricsS, 2)} s; ` +
        `${r.events} events kept, heap +${fmt(r.heapMiB, 0)} MiB`,
      baseline: `old importer: Math.min(...1M starts) → ${r.oldImporter}`,
      ratio: '',
      target: `imports, < ${TARGET_S} s`,
      met: r.importS + r.metricsS < TARGET_S,
    }),
  );
  return { rows, records };
}
