// Chrome-trace export: schema, metadata, counters, NCCL names, and no overlap on one (pid, tid).
import { describe, expect, it } from 'vitest';
import {
  exportChromeTrace,
  exportChromeTraces,
  ncclKernelName,
  type ChromeEvent,
} from '../../../src/trace/chrome_export';
import { syntheticStep } from './helpers';

describe('exportChromeTrace', () => {
  const step = syntheticStep(1, 3);
  const trace = JSON.parse(JSON.stringify(exportChromeTrace(step))) as {
    traceEvents: ChromeEvent[];
    displayTimeUnit: string;
    distributedInfo: { rank: number; world_size: number };
  };

  it('writes a Chrome trace object with displayTimeUnit and distributedInfo', () => {
    expect(trace.displayTimeUnit).toBe('ms');
    expect(trace.distributedInfo).toEqual({ rank: 0, world_size: 3 });
    for (const e of trace.traceEvents) {
      expect(typeof e.ph).toBe('string');
      expect(Number.isInteger(e.pid)).toBe(true);
      expect(Number.isInteger(e.tid)).toBe(true);
    }
  });

  it('gives every X event ts/dur in µs with at most 3 decimals and pid = rank', () => {
    const xs = trace.traceEvents.filter((e) => e.ph === 'X');
    expect(xs.length).toBe(step.events.length);
    for (const e of xs) {
      expect(Math.abs(e.ts! * 1000 - Math.round(e.ts! * 1000))).toBeLessThan(1e-6);
      expect(Math.abs(e.dur! * 1000 - Math.round(e.dur! * 1000))).toBeLessThan(1e-6);
      expect([0, 1, 2]).toContain(e.pid);
    }
  });

  it('names processes and threads with M metadata for every (pid, tid) used', () => {
    const named = new Set(
      trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`),
    );
    const procs = new Set(trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.pid));
    for (const e of trace.traceEvents.filter((x) => x.ph === 'X')) {
      expect(named.has(`${e.pid}/${e.tid}`)).toBe(true);
      expect(procs.has(e.pid)).toBe(true);
    }
  });

  it('writes memory as C counters, one per curve point', () => {
    const cs = trace.traceEvents.filter((e) => e.ph === 'C');
    expect(cs.length).toBe(step.memory.reduce((s, m) => s + m.t.length, 0));
    expect(cs.every((c) => typeof (c.args as { bytes: number }).bytes === 'number')).toBe(true);
  });

  it('names comm kernels like NCCL with cat kernel and bytes/bucket args', () => {
    const comm = trace.traceEvents.filter((e) => e.ph === 'X' && e.name.startsWith('ncclDevKernel_'));
    expect(comm.length).toBe(step.events.filter((e) => e.kind === 'all_gather' || e.kind === 'reduce_scatter').length);
    for (const e of comm) {
      expect(e.cat).toBe('kernel');
      expect(e.args).toHaveProperty('bytes');
      expect(Array.isArray((e.args as Record<string, unknown>)['bucket members'])).toBe(true);
    }
    expect(ncclKernelName('all_gather')).toMatch(/^ncclDevKernel_AllGather_RING_LL\(/);
    expect(ncclKernelName('reduce_scatter', 'fp32')).toMatch(/^ncclDevKernel_ReduceScatter_Sum_f32_RING_LL/);
    expect(
      trace.traceEvents.filter((e) => e.ph === 'X' && e.name.startsWith('mm_')).every((e) => e.cat === 'kernel'),
    ).toBe(true);
  });

  it('never overlaps two intervals on one (pid, tid)', () => {
    const lanes = new Map<string, [number, number][]>();
    for (const e of trace.traceEvents.filter((x) => x.ph === 'X')) {
      const k = `${e.pid}/${e.tid}`;
      // compare in integer ns: the export rounds both ends to the ns
      lanes.set(k, [...(lanes.get(k) ?? []), [Math.round(e.ts! * 1000), Math.round((e.ts! + e.dur!) * 1000)]]);
    }
    for (const spans of lanes.values()) {
      spans.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
    }
  });
});

describe('exportChromeTraces', () => {
  it('writes one file per rank, each holding only its rank', () => {
    const files = exportChromeTraces(syntheticStep(2, 4));
    expect(files.map((f) => f.distributedInfo.rank)).toEqual([0, 1, 2, 3]);
    files.forEach((f, r) => expect(f.traceEvents.every((e) => e.pid === r)).toBe(true));
  });
});
