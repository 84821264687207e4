// Imported traces give Holistic Trace Analysis' numbers: HTA's own figures on two real rank files
// of its test data (test/fixtures/hta, expected.json computed by HTA), and HTA's definitions on
// hand-made Kineto traces (window, rounding, categories, ranks, every collective).
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { analyzeTrace } from '../../../src/trace/analysis';
import { exportChromeTrace } from '../../../src/trace/chrome_export';
import type { TraceEvent } from '../../../src/trace/event';
import { traceText } from '../../../src/trace/gzip';
import { importTrace } from '../../../src/trace/import';
import { COMM_KINDS } from '../../../src/trace/kinds';
import { computeMetrics } from '../../../src/trace/metrics';
import { fixturePath } from '../../helpers/fixtures';

const expected = JSON.parse(readFileSync(fixturePath('hta/expected.json'), 'utf8')).trace_filter as {
  files: string[];
  ranks: Record<
    string,
    { overlapPct: number; idlePct: number; computePct: number; nonComputePct: number; spanUs: number }
  >;
};

describe("HTA's figures on its own test traces", () => {
  it('matches overlap, idle, compute and non-compute % within 0.1 point and the span within 1 µs', async () => {
    const texts = await Promise.all(expected.files.map((f) => traceText(f, readFileSync(fixturePath('hta', f)))));
    const r = importTrace(texts);
    if (!r.ok) throw r.error;
    const a = analyzeTrace(r.value.events, r.value.memory);
    expect(a.ranks.map((x) => x.rank)).toEqual(Object.keys(expected.ranks).map(Number));
    for (const row of a.ranks) {
      const want = expected.ranks[String(row.rank)];
      for (const k of ['overlapPct', 'idlePct', 'computePct', 'nonComputePct'] as const)
        expect(Math.abs(row[k] - want[k]), `rank ${row.rank} ${k}`).toBeLessThanOrEqual(0.1);
      expect(Math.abs(row.spanUs - want.spanUs)).toBeLessThanOrEqual(1);
      expect(row.idlePct + row.computePct + row.nonComputePct).toBeCloseTo(100, 9);
      // the communication HTA counts here is NCCL SendRecv, which the old importer dropped
      expect(row.collectives.send_recv).toBeGreaterThan(0);
      expect(row.memoryUs).toBeGreaterThan(0);
    }
    // two ProfilerSteps: HTA analyses the first only, so every row is iteration 551
    expect(new Set(a.iterations.map((x) => x.iteration))).toEqual(new Set([551]));
  });

  it('reads .json.gz and plain text the same', async () => {
    const gz = readFileSync(fixturePath('hta', expected.files[0]));
    const plain = gunzipSync(gz);
    expect(await traceText('a.json.gz', gz)).toBe(await traceText('a.json', plain));
    await expect(traceText('bad.json.gz', new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).rejects.toThrow(
      /bad\.json\.gz could not be decompressed/,
    );
  });
});

// ---- hand-made Kineto traces ----

interface K {
  name: string;
  ts: number;
  dur: number;
  stream?: number;
  corr?: number;
  cat?: string;
  collective?: string;
}
const CPU_PID = 4000;

/** A Kineto rank file: each GPU event gets a cudaLaunchKernel at `launch` with its correlation. */
function kineto(
  gpu: (K & { launch?: number })[],
  steps: [number, number][],
  opts: { rank?: number; extra?: object[] } = {},
) {
  const ev: object[] = steps.map(([ts, dur], i) => ({
    ph: 'X',
    cat: 'user_annotation',
    name: `ProfilerStep#${i + 1}`,
    pid: CPU_PID,
    tid: 1,
    ts,
    dur,
    args: {},
  }));
  gpu.forEach((k, i) => {
    const corr = k.corr ?? 100 + i;
    if (k.launch !== undefined)
      ev.push({
        ph: 'X',
        cat: 'cuda_runtime',
        name: 'cudaLaunchKernel',
        pid: CPU_PID,
        tid: 1,
        ts: k.launch,
        dur: 2,
        args: { correlation: corr },
      });
    const args: Record<string, unknown> = { device: 0, stream: k.stream ?? 7, correlation: corr };
    if (k.collective) args['Collective name'] = k.collective;
    ev.push({ ph: 'X', cat: k.cat ?? 'kernel', name: k.name, pid: 0, tid: k.stream ?? 7, ts: k.ts, dur: k.dur, args });
  });
  ev.push(...(opts.extra ?? []));
  return {
    ...(opts.rank !== undefined ? { distributedInfo: { rank: opts.rank, world_size: 2 } } : {}),
    traceEvents: ev,
  };
}

function imported(input: unknown) {
  const r = importTrace(input);
  if (!r.ok) throw r.error;
  return r.value;
}

describe("HTA's definitions on hand-made Kineto traces", () => {
  it('keeps every collective, counts memcpy/memset/sync as non-compute, and drops the last ProfilerStep', () => {
    const t = kineto(
      [
        { name: 'gemm', ts: 1000, dur: 100, launch: 10 },
        { name: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)', ts: 1050, dur: 100, stream: 20, launch: 11 },
        { name: 'ncclKernel_SendRecv_RING_SIMPLE_Sum_int8', ts: 1200, dur: 50, stream: 21, launch: 12 },
        { name: 'ncclDevKernel_Broadcast_RING_LL(x)', ts: 1300, dur: 10, stream: 20, launch: 13 },
        { name: 'ncclDevKernel_SendRecv(x)', ts: 1320, dur: 10, stream: 21, launch: 14, collective: 'all_to_all' },
        { name: 'Memcpy DtoD (Device -> Device)', cat: 'gpu_memcpy', ts: 1400, dur: 20, launch: 15 },
        { name: 'Memset (Device)', cat: 'gpu_memset', ts: 1430, dur: 10, launch: 16 },
        { name: 'Stream Sync', cat: 'cuda_sync', ts: 1450, dur: 50, launch: 17 },
        { name: 'gemm', ts: 1500, dur: 100, launch: 18 },
        // iteration 2 (launched in the second step)
        { name: 'gemm', ts: 2000, dur: 300, launch: 120 },
        { name: 'ncclDevKernel_AllGather_RING_LL(x)', ts: 2100, dur: 100, stream: 20, launch: 121 },
        // the last step's kernels (launched after it starts): HTA drops them
        { name: 'gemm', ts: 3000, dur: 999, launch: 210 },
        // a kernel no CPU event launched
        { name: 'orphan', ts: 2500, dur: 50, corr: 9999 },
      ],
      [
        [0, 100],
        [100, 100],
        [200, 100],
      ],
      { rank: 1 },
    );
    const tr = imported(t);
    const a = analyzeTrace(tr.events);
    expect(tr.events.some((e) => e.name === 'orphan' || e.dur === 999)).toBe(false);
    const kinds = new Set(tr.events.map((e) => e.kind));
    for (const k of ['all_reduce', 'send_recv', 'broadcast', 'all_to_all', 'all_gather', 'memory', 'sync', 'compute'])
      expect(kinds.has(k as TraceEvent['kind'])).toBe(true);
    const [r] = a.ranks;
    expect(r.rank).toBe(1);
    // span [1000, 2300] = 1300. compute [1000,1100] [1500,1600] [2000,2300] = 500.
    // busy: [1000,1150] [1200,1250] [1300,1310] [1320,1330] [1400,1420] [1430,1440] [1450,1600] [2000,2300] = 700
    expect(r.spanUs).toBe(1300);
    expect(r.computePct).toBeCloseTo((500 / 1300) * 100, 9);
    expect(r.idlePct).toBeCloseTo((600 / 1300) * 100, 9);
    expect(r.nonComputePct).toBeCloseTo((200 / 1300) * 100, 9);
    // comm [1050,1150] [1200,1250] [1300,1310] [1320,1330] [2100,2200] = 270;
    // under compute [1050,1100] + [2100,2200] = 150
    expect(r.overlapPct).toBeCloseTo((150 / 270) * 100, 9);
    expect(r.memoryUs).toBe(30);
    expect(r.syncUs).toBe(50);
    expect(r.collectives).toEqual({
      all_gather: 1,
      reduce_scatter: 0,
      all_reduce: 1,
      send_recv: 1,
      broadcast: 1,
      all_to_all: 1,
    });
    expect(a.iterations.map((x) => [x.iteration, x.rank, x.spanUs])).toEqual([
      [1, 1, 600],
      [2, 1, 300],
    ]);
    expect(a.iterations[1].overlapPct).toBeCloseTo((100 / 100) * 100, 9);
    expect(tr.warnings.join()).toMatch(/2 GPU event\(s\) outside HTA's window/);
  });

  it('rounds fractional µs down, as HTA reads int64 µs', () => {
    const t = kineto(
      [
        { name: 'gemm', ts: 1000.9, dur: 10.9, launch: 1 },
        { name: 'gemm', ts: 1020.2, dur: 5.99, launch: 2 },
      ],
      [[0, 50]],
      { rank: 0 },
    );
    const e = imported(t).events;
    expect(e.map((x) => [x.start, x.dur])).toEqual([
      [0, 10],
      [20, 5],
    ]);
  });

  it('says "no communication" as NaN, never 0 %', () => {
    const a = analyzeTrace(
      imported(kineto([{ name: 'gemm', ts: 0, dur: 10, launch: 1 }], [[0, 5]], { rank: 0 })).events,
    );
    expect(a.ranks[0].overlapPct).toBeNaN();
    expect(JSON.parse(JSON.stringify(a)).ranks[0].overlapPct).toBeNull();
  });

  it('reads a file without distributedInfo as rank 0 with a warning, whatever its GPU pid', () => {
    const t = kineto([{ name: 'gemm', ts: 0, dur: 10, launch: 1 }], [[0, 5]]);
    for (const e of t.traceEvents as { pid: number }[]) if (e.pid === 0) e.pid = 2; // a single-GPU trace of GPU 2
    const tr = imported(t);
    expect(tr.events[0].rank).toBe(0);
    expect(tr.worldSize).toBe(1);
    expect(tr.warnings.join()).toMatch(/no distributedInfo\.rank: read as rank 0/);
  });

  it('reads MTIA traces (mtia_ccp_events), inside the ProfilerSteps', () => {
    const t = kineto(
      [
        { name: 'mtia_kernel', cat: 'mtia_ccp_events', ts: 100, dur: 10, launch: 5 },
        { name: 'late', cat: 'mtia_ccp_events', ts: 900, dur: 10, launch: 500 },
      ],
      [
        [0, 50],
        [50, 50],
      ],
      { rank: 0 },
    );
    expect(imported(t).events.map((e) => e.name)).toEqual(['mtia_kernel']);
  });

  it('keeps a trace without CPU events whole (no window to apply)', () => {
    const t = {
      traceEvents: [
        { ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 7, ts: 5, dur: 3, args: { stream: 7, correlation: 1 } },
      ],
    };
    expect(imported(t).events).toHaveLength(1);
  });
});

describe('simulated traces read back with the same numbers', () => {
  /** Every comm kind on its own stream, integer µs (so the Kineto reading's rounding changes nothing). */
  function allKinds(): { events: TraceEvent[]; worldSize: number } {
    const events: TraceEvent[] = [];
    for (let rank = 0; rank < 2; rank++) {
      let t = 0;
      COMM_KINDS.forEach((kind, i) => {
        events.push({ rank, stream: 'compute', name: `mm_${i}`, kind: 'compute', start: t, dur: 40 });
        events.push({ rank, stream: `comm:g${i % 2}`, name: `${kind}_${i}`, kind, start: t + 20 + rank, dur: 50 });
        if (i === 2)
          events.push({ rank, stream: 'compute', name: `wait_${i}`, kind: 'wait', start: t + 40, dur: 31 + rank });
        t += 80;
      });
    }
    return { events, worldSize: 2 };
  }

  it('exports every collective kind and imports them back, as fsdp-sim and as a plain Kineto trace', () => {
    const step = allKinds();
    const want = computeMetrics(step.events);
    const file = JSON.parse(JSON.stringify(exportChromeTrace(step)));
    const own = imported(file);
    expect(own.source).toBe('fsdp-sim');
    expect(computeMetrics(own.events)).toEqual(want);
    // without our marker the file is read as HTA reads it: by kernel names, stream and correlation
    delete file.fsdpSim;
    const k = imported(file);
    expect(k.source).toBe('kineto');
    const got = computeMetrics(k.events);
    for (const key of [
      'stepTimeUs',
      'computeUs',
      'commUs',
      'exposedCommUs',
      'idleUs',
      'overlapPct',
      'nonComputeUs',
    ] as const)
      expect(got[key]).toBeCloseTo(want[key], 9);
    expect(got.collectives).toEqual(want.collectives);
    expect(Object.values(want.collectives).every((c) => c === 1)).toBe(true);
  });
});

describe('large traces', () => {
  it('imports 200k kernels (the old importer overflowed the stack from ~124k) and gzip text of them', async () => {
    const n = 200_000;
    const traceEvents = new Array(n);
    for (let i = 0; i < n; i++)
      traceEvents[i] = {
        ph: 'X',
        cat: 'kernel',
        name: i % 5 ? 'gemm' : 'ncclDevKernel_AllReduce_Sum_f32_RING_LL',
        pid: 0,
        tid: 7,
        ts: 10 * i,
        dur: 8,
        args: { stream: i % 5 ? 7 : 20, correlation: i },
      };
    const r = importTrace({ distributedInfo: { rank: 0, world_size: 1 }, traceEvents });
    if (!r.ok) throw r.error;
    expect(r.value.events).toHaveLength(n);
    const m = computeMetrics(r.value.events);
    expect(m.collectives.all_reduce).toBe(n / 5);
    const text = await traceText('big.json.gz', gzipSync(JSON.stringify({ traceEvents: traceEvents.slice(0, 1000) })));
    expect(importTrace(text).ok).toBe(true);
  });
});
