// Per-rank Chrome-trace export with collective → wait flows: every blocked wait gets one flow whose
// start sits on its collective's kernel and whose end on the wait; the project's importer reads
// the rank files back with the simulation's metrics, flows and all.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { exportChromeTraces, WAIT_FLOW, waitOfGraph, type ChromeEvent } from '../../../src/trace/chrome_export';
import { importTrace } from '../../../src/trace/import';
import { computeMetrics } from '../../../src/trace/metrics';

describe('exportChromeTraces with waitOf', () => {
  const run = runPipeline({ ...defaultConfig(), ranks: 4 }, 'aot_eager_autobucketing');
  const waitOf = waitOfGraph(run.schedule.graph);
  const input = {
    events: run.sim.events,
    memory: run.sim.memory,
    worldSize: run.sim.worldSize,
  };
  const files = exportChromeTraces(input, {
    buckets: run.schedule.buckets,
    waitOf,
  });

  it('links each blocked wait to its collective, on that rank', () => {
    expect(files).toHaveLength(4);
    for (const [rank, f] of files.entries()) {
      const ev = f.traceEvents;
      const starts = ev.filter((e) => e.ph === 's');
      const ends = ev.filter((e) => e.ph === 'f');
      const waits = run.sim.events.filter((e) => e.rank === rank && e.kind === 'wait');
      expect(waits.length).toBeGreaterThan(0);
      expect(starts).toHaveLength(waits.length);
      expect(ends.map((e) => e.id)).toEqual(starts.map((e) => e.id));
      for (const s of starts) {
        expect([s.cat, s.name, s.pid]).toEqual([WAIT_FLOW.cat, WAIT_FLOW.name, rank]);
        const f = ends.find((e) => e.id === s.id)!;
        expect(f.bp).toBe('e');
        // 's' on a collective kernel's start, 'f' on a wait's start; a blocked wait ends with its collective
        const kernel = ev.find(
          (k: ChromeEvent) => k.ph === 'X' && k.tid === s.tid && k.ts === s.ts && /^ncclDevKernel_/.test(k.name),
        );
        const wait = ev.find(
          (k: ChromeEvent) => k.ph === 'X' && k.tid === f.tid && k.ts === f.ts && k.name === 'Stream Wait Event',
        );
        expect(kernel).toBeDefined();
        expect(wait).toBeDefined();
        expect(wait!.ts! + wait!.dur!).toBeCloseTo(kernel!.ts! + kernel!.dur!, 2);
      }
    }
  });

  it("reads back through the importer with the simulation's metrics", () => {
    const r = importTrace(files.map((f) => JSON.parse(JSON.stringify(f))));
    if (!r.ok) throw r.error;
    const back = computeMetrics(r.value.events, r.value.memory);
    const sim = computeMetrics(run.sim.events, run.sim.memory);
    expect(r.value.worldSize).toBe(4);
    // times travel with 3 decimals (ns), as Kineto writes them
    expect(back.stepTimeUs).toBeCloseTo(sim.stepTimeUs, 1);
    expect(back.exposedCommUs).toBeCloseTo(sim.exposedCommUs, 1);
    expect(back.overlapPct).toBeCloseTo(sim.overlapPct, 2);
    expect(back.collectives).toEqual(sim.collectives);
  });
});
