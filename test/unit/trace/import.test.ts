// Trace import: round trip of our export, the hand-made Kineto fixture, and mangled files.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../../src/errors';
import { exportChromeTrace, exportChromeTraces } from '../../../src/trace/chrome_export';
import { importTrace } from '../../../src/trace/import';
import { isCommKind } from '../../../src/trace/kinds';
import { computeMetrics } from '../../../src/trace/metrics';
import { syntheticStep } from './helpers';
import { fixturePath } from '../../helpers/fixtures';

const fixture = (name: string) => JSON.parse(readFileSync(fixturePath(`kineto/${name}`), 'utf8'));

function expectSameMetrics(a: ReturnType<typeof computeMetrics>, b: ReturnType<typeof computeMetrics>) {
  expect(b.perRank.length).toBe(a.perRank.length);
  for (const k of ['stepTimeUs', 'computeUs', 'commUs', 'exposedCommUs', 'idleUs', 'overlapPct'] as const)
    expect(b[k]).toBeCloseTo(a[k], 2);
  expect(b.peakMemoryBytes).toBe(a.peakMemoryBytes);
  expect(b.collectives).toEqual(a.collectives);
}

describe('importTrace', () => {
  it('reads our merged export back with the same metrics, streams, names and buckets', () => {
    const step = syntheticStep(3, 3);
    const res = importTrace(JSON.stringify(exportChromeTrace(step)));
    if (!res.ok) throw res.error;
    expect(res.value.source).toBe('fsdp-sim');
    expect(res.value.worldSize).toBe(3);
    expectSameMetrics(computeMetrics(step.events, step.memory), computeMetrics(res.value.events, res.value.memory));
    const orig = step.events.find((e) => e.kind === 'all_gather')!;
    const back = res.value.events.find((e) => e.rank === orig.rank && e.name === orig.name)!;
    expect(back).toMatchObject({
      stream: orig.stream,
      kind: orig.kind,
      bucketId: orig.bucketId,
      bytes: orig.bytes,
      params: orig.params,
    });
  });

  it('reads our per-rank files back with the same metrics', () => {
    const step = syntheticStep(4, 4);
    const res = importTrace(exportChromeTraces(step).map((f) => JSON.parse(JSON.stringify(f))));
    if (!res.ok) throw res.error;
    expectSameMetrics(computeMetrics(step.events, step.memory), computeMetrics(res.value.events, res.value.memory));
  });

  it('imports the Kineto fixture: ranks from distributedInfo, NCCL kernels as collectives', () => {
    const res = importTrace([fixture('rank0.pt.trace.json'), fixture('rank1.pt.trace.json')]);
    if (!res.ok) throw res.error;
    const t = res.value;
    expect(t.source).toBe('kineto');
    expect(t.worldSize).toBe(2);
    // rank 0 by hand (README): comp [1000,1200]+[1250,1550]+[1600,2000] = 900; comm [900,1150]+[1700,2200] = 750
    // overlap [1000,1150] + [1700,2000] = 450; U_comp ∪ U_comm = 300+300+600 = 1200. The memcpy at
    // [2250,2253] (no correlation, launched inside the only ProfilerStep) is non-compute GPU time for
    // HTA: span [900,2253] = 1353, busy 1203, idle 150
    const m = computeMetrics(t.events, t.memory);
    const r0 = m.perRank[0];
    expect(r0.computeUs).toBeCloseTo(900, 3);
    expect(r0.commUs).toBeCloseTo(750, 3);
    expect(r0.exposedCommUs).toBeCloseTo(300, 3);
    expect(r0.overlapPct).toBeCloseTo(60, 3);
    expect(r0.stepUs).toBeCloseTo(1353, 3);
    expect(r0.idleUs).toBeCloseTo(150, 3);
    expect(r0.categoryUs.memory).toBe(3);
    expect(r0.collectives).toMatchObject({ all_gather: 1, reduce_scatter: 1, all_reduce: 0 });
    expect(m.perRank[1].collectives.all_reduce).toBe(1); // kept and counted, not dropped with a warning
    expect(r0.peakMemoryBytes).toBe(3_100_000_000);
    expect(m.perRank[1].peakMemoryBytes).toBe(3_200_000_000);
    // the earliest kernel (rank 0's AllGather) is time 0; rank 1's starts 10 µs later
    expect(Math.min(...t.events.filter((e) => e.rank === 1).map((e) => e.start))).toBeCloseTo(10, 3);
    expect(t.events.filter((e) => isCommKind(e.kind)).every((e) => e.stream === 'comm:stream20')).toBe(true);
  });

  it('imports a merged Kineto file, taking the rank from pid', () => {
    const [a, b] = [fixture('rank0.pt.trace.json'), fixture('rank1.pt.trace.json')];
    const merged = { traceEvents: [...a.traceEvents, ...b.traceEvents] };
    const res = importTrace(merged);
    if (!res.ok) throw res.error;
    expect([...new Set(res.value.events.map((e) => e.rank))]).toEqual([0, 1]);
  });

  it('names the event index and field of a malformed kernel', () => {
    const f = fixture('rank0.pt.trace.json');
    const i = f.traceEvents.findIndex((e: { cat?: string }) => e.cat === 'kernel');
    f.traceEvents[i].ts = 'soon';
    const res = importTrace(f);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error).toBeInstanceOf(ImportError);
    expect(res.error.where).toBe(`trace.traceEvents[${i}].ts`);
    expect(res.error.message).toContain('"soon"');
  });

  it('rejects negative durations, non-object events, missing traceEvents and bad JSON', () => {
    const f = fixture('rank1.pt.trace.json');
    const i = f.traceEvents.findIndex((e: { cat?: string }) => e.cat === 'kernel');
    f.traceEvents[i].dur = -1;
    const cases: [unknown, RegExp][] = [
      [f, new RegExp(`traceEvents\\[${i}\\]\\.dur`)],
      [
        { traceEvents: [{ ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 7, ts: 0, dur: 1 }, 42] },
        /traceEvents\[1\] must be an object/,
      ],
      [{ events: [] }, /trace\.traceEvents must be an array/],
      ['{"traceEvents": [', /not valid JSON/],
      [{ traceEvents: [] }, /no GPU kernels/],
      [[fixture('rank0.pt.trace.json'), fixture('rank0.pt.trace.json')], /file\[1\] holds rank 0/],
    ];
    for (const [input, re] of cases) {
      const res = importTrace(input);
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.error.message).toMatch(re);
    }
  });
});
