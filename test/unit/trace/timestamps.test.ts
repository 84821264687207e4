// Issue 22 S3: a Kineto ts/dur that puts the clock past 2^53 µs (where a double stops holding whole
// µs), a negative dur or a non-finite value is an error naming the event and field, in the
// importer that analyze and the app share — not a kernel that silently vanishes.
import { describe, expect, it } from 'vitest';
import { exportChromeTrace } from '../../../src/trace/chrome_export';
import { importTrace } from '../../../src/trace/import';
import { syntheticStep } from './helpers';

const kernel = (name: string, ts: unknown, dur: unknown) => ({
  ph: 'X',
  cat: 'kernel',
  name,
  pid: 0,
  tid: 7,
  ts,
  dur,
  args: { stream: 7, correlation: 1, device: 0 },
});

const T0 = 1_682_725_898_079_484; // µs since the epoch, as Kineto writes ts

/** A one-rank Kineto file: two GEMMs at sane times, then the event under test. */
const kineto = (ev: object) => ({
  distributedInfo: { rank: 0, world_size: 1 },
  traceEvents: [kernel('sm90_gemm_a', T0, 100), kernel('sm90_gemm_b', T0 + 116, 50), ev],
});

const errorOf = (trace: unknown): string => {
  const r = importTrace(trace);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error.message;
};

describe('Kineto times are checked against 2^53 µs', () => {
  it('refuses a GEMM at ts 2^60, naming the event and field', () => {
    expect(errorOf(kineto(kernel('gemm', 2 ** 60, 10)))).toBe(
      `trace.traceEvents[2].ts must be a number in [0, 2^53) µs, got ${2 ** 60}`,
    );
  });

  it('refuses ±1e308, a negative ts and a non-finite ts', () => {
    for (const ts of [1e308, -1e308, -1, Number.POSITIVE_INFINITY, Number.NaN])
      expect(errorOf(kineto(kernel('k', ts, 1))), String(ts)).toMatch(/^trace\.traceEvents\[2\]\.ts must be a num/);
  });

  it('refuses a dur of 1e308, a negative dur, and one that ends past 2^53 µs', () => {
    const near = 2 ** 53 - 10;
    for (const [ts, dur] of [
      [T0 + 216, 1e308],
      [T0 + 216, -5],
      [near, 20],
    ])
      expect(errorOf(kineto(kernel('k', ts, dur))), `${ts} ${dur}`).toBe(
        `trace.traceEvents[2].dur must be a number ≥ 0 that ends the event before 2^53 µs (ts ${ts}), got ${dur}`,
      );
    // just inside is read, and kept whole µs
    const ok = importTrace(kineto(kernel('k', near, 9)));
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(ok.value.events.map((e) => e.name)).toContain('k');
  });

  it("checks fsdp-sim's own export and memory counters the same way", () => {
    type Trace = { traceEvents: Record<string, unknown>[] };
    const t = JSON.parse(JSON.stringify(exportChromeTrace(syntheticStep(3, 1)))) as Trace;
    const i = t.traceEvents.findIndex((e) => e.ph === 'X');
    t.traceEvents[i] = { ...t.traceEvents[i], dur: 1e308 };
    expect(errorOf(t)).toMatch(new RegExp(`^trace\\.traceEvents\\[${i}\\]\\.dur must be a number ≥ 0 that ends`));
    const m = JSON.parse(JSON.stringify(exportChromeTrace(syntheticStep(3, 1)))) as Trace;
    const c = m.traceEvents.findIndex((e) => e.ph === 'C');
    m.traceEvents[c] = { ...m.traceEvents[c], ts: 2 ** 60 };
    expect(errorOf(m)).toBe(`trace.traceEvents[${c}].ts must be a number in [0, 2^53) µs, got ${2 ** 60}`);
  });
});
