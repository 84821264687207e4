// One meaning per word, in headless Chromium on the built app. On llama3-70b × 64 every
// memory figure the headline, the metrics table, the HBM words and the memory chart show goes by
// its one name (glossary.ts MEMORY_NAMES, the glossary-linked term of its row) and equals the
// run's data; each row says how it combines the ranks. On ?story=hang the hung side shows no
// full-step figure anywhere, and the caption's claims about B's timeline hold against the events
// the timeline draws (its probe, window.__FSDP_SIM__). After a live run on 'auto' kernels the
// headline names the kernels the ranks used, and its advice is what Run live A+B then gives.

import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { MEMORY_NAMES, termById } from '../../src/ui/glossary';
import { liveAdvice } from '../../src/ui/like_runs';
import { AGGREGATES } from '../../src/ui/panels/metrics_table';
import { fmtBytes, fmtDelta, fmtUs } from '../../src/ui/ui_format';
import { appForFile } from './harness';
import { probeOf, rankStreams } from './page';

const app = appForFile({ width: 1440, height: 900 });
const SIM_TIMEOUT = 120_000;

interface SideData {
  readonly title: string;
  readonly live: number; // peak live tensors, max over ranks
  readonly allocated: number | null;
  readonly reserved: number | null;
  readonly curve: { readonly rank: number; readonly peak: number } | null; // the chart's (lowest rank's) curve
  readonly hung: boolean;
  readonly events: number;
  /** Each rank's last event end, µs, by rank. */
  readonly ends: readonly [number, number][];
  readonly mismatch: { readonly rank: number; readonly timeUs: number } | null;
}

/** Open `query` and wait for both sides and the headline to be drawn from them. */
async function openAt(page: Page, query: string): Promise<void> {
  await page.goto(`${new URL(page.url()).origin}/${query}`);
  await page.waitForFunction(
    () => {
      const s = window.__FSDP_SIM__?.store.getState();
      const h = document.querySelector<HTMLElement>('[data-testid="headline"]');
      const t = window.__FSDP_SIM__?.timelines;
      return (
        !!s &&
        !s.simulating &&
        s.sides.a?.source === 'sim' &&
        s.sides.b?.source === 'sim' &&
        !!h &&
        h.dataset.kind !== 'pending' &&
        t?.a !== undefined &&
        t.b !== undefined
      );
    },
    undefined,
    { timeout: SIM_TIMEOUT },
  );
}

async function sideData(page: Page, side: 'a' | 'b'): Promise<SideData> {
  return page.evaluate((k) => {
    const r = window.__FSDP_SIM__!.store.getState().sides[k]!;
    const ends = new Map<number, number>();
    for (const e of r.events) ends.set(e.rank, Math.max(ends.get(e.rank) ?? 0, e.start + e.dur));
    const curve = [...r.memory].sort((x, y) => x.rank - y.rank)[0];
    return {
      title: r.title,
      live: r.metrics.peakMemoryBytes,
      allocated: r.allocator?.peakAllocatedBytes ?? null,
      reserved: r.allocator?.peakReservedBytes ?? null,
      curve: curve ? { rank: curve.rank, peak: curve.peakBytes } : null,
      hung: r.mismatch !== undefined,
      events: r.events.length,
      ends: [...ends].sort((x, y) => x[0] - y[0]),
      mismatch: r.mismatch ? { rank: r.mismatch.ranks[1], timeUs: r.mismatch.timeUs } : null,
    };
  }, side);
}

const text = async (page: Page, sel: string) => (await page.locator(sel).allTextContents()).join(' ');

/** Every 'peak' in `s` is one of the three names: 'peak live tensors', 'peak allocated', 'peak reserved'. */
function barePeaks(s: string): string[] {
  return [...s.matchAll(/\bpeak\b(?! live tensors| allocated| reserved)\S*(?:\s\S+){0,2}/g)].map((m) => m[0]);
}

const MEMORY_ROWS = [
  ['peak', MEMORY_NAMES.live, AGGREGATES.max],
  ['peak_allocated', MEMORY_NAMES.allocated, AGGREGATES.rank0],
  ['peak_reserved', MEMORY_NAMES.reserved, AGGREGATES.rank0],
] as const;

describe('one name per memory figure (llama3-70b × 64)', () => {
  it(
    "table, glossary terms, headline and chart name each figure once and show the run's value",
    async () => {
      const page = app.page;
      await openAt(page, '?model=llama3-70b&ranks=64');
      const a = await sideData(page, 'a');
      const b = await sideData(page, 'b');
      const want = (d: SideData, key: string) =>
        key === 'peak' ? d.live : key === 'peak_allocated' ? d.allocated! : d.reserved!;
      for (const [key, name, agg] of MEMORY_ROWS) {
        const tr = page.locator(`[data-testid="metrics"] tr[data-metric="${key}"]`);
        expect(await tr.locator('.term').textContent(), key).toBe(name);
        // the row's hover definition is the glossary's term of that name
        const term = termById(key);
        expect(term.term).toBe(name);
        expect(await tr.locator('.term').getAttribute('data-def')).toBe(`${name}: ${term.text}`);
        expect(await tr.locator('th').getAttribute('data-agg')).toBe(agg);
        expect(await tr.locator('th').textContent()).toContain(`(${agg})`);
        for (const [side, d] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const td = tr.locator(`td[data-side="${side}"]`);
          expect(Number(await td.getAttribute('data-value')), `${key} ${side}`).toBe(want(d, key));
          expect(await td.textContent(), `${key} ${side}`).toBe(fmtBytes(want(d, key)));
        }
      }
      // the other rows say how they combine ranks, and it is not "mean" for the step
      expect(await page.getAttribute('[data-testid="metrics"] tr[data-metric="step"] th', 'data-agg')).toBe(
        AGGREGATES.span,
      );
      expect(await page.getAttribute('[data-testid="metrics"] tr[data-metric="exposed"] th', 'data-agg')).toBe(
        AGGREGATES.mean,
      );
      expect(await text(page, '[data-testid="metrics"] h2')).not.toMatch(/mean over ranks/);

      // the headline: the live-tensor delta and the reserved peaks over HBM, by name, with the run's values
      const headline = (await page.textContent('[data-testid="headline"]'))!;
      expect(headline).toContain(`${MEMORY_NAMES.live} ${fmtDelta(a.live, b.live)}`);
      expect(headline).toContain(`A: ${MEMORY_NAMES.reserved} ${fmtBytes(a.reserved!)} = `);
      expect(headline).toContain(`B: ${MEMORY_NAMES.reserved} ${fmtBytes(b.reserved!)} = `);
      // the table's HBM warning, the timelines' heads and the memory chart's legend and note
      const warning = (await page.textContent('[data-testid="metrics-hbm-warning"]'))!;
      expect(warning).toContain(`with ${MEMORY_NAMES.allocated} ${fmtBytes(a.allocated!)}`);
      const heads = await text(page, '[data-testid="hbm-warn"]');
      expect(heads).toContain(`${MEMORY_NAMES.reserved} ${fmtBytes(a.reserved!)}`);
      const legend = (await page.locator('[data-testid="memory-chart"] + .chart-legend').textContent())!;
      for (const d of [a, b]) {
        expect(legend).toContain(`${d.title} (rank ${d.curve!.rank}, ${MEMORY_NAMES.live} ${fmtBytes(d.curve!.peak)})`);
      }
      const note = (await page.textContent('[data-testid="memory-hbm-note"]'))!;
      for (const s of [headline, await text(page, '[data-testid="metrics"]'), heads, legend, note]) {
        expect(barePeaks(s), s).toEqual([]);
      }
      expect(app.pageErrors).toEqual([]);
    },
    SIM_TIMEOUT,
  );
});

describe('a hung side (?story=hang)', () => {
  it(
    "shows no full-step figure, and the caption says what B's timeline draws",
    async () => {
      const page = app.page;
      await openAt(page, '?story=hang');
      await page.waitForFunction(
        () => {
          const c = document.querySelector<HTMLElement>('[data-testid="story-caption"]');
          return c?.dataset.story === 'hang' && !c.textContent?.includes('Simulating…');
        },
        undefined,
        { timeout: SIM_TIMEOUT },
      );
      const a = await sideData(page, 'a');
      const b = await sideData(page, 'b');
      expect(b.hung && !a.hung).toBe(true);

      // the table: whole-step figures read "not a full step", the rest "to the hang"; no delta
      for (const key of ['step', 'peak_allocated', 'peak_reserved']) {
        const td = `[data-testid="metrics"] tr[data-metric="${key}"] td[data-side="b"]`;
        expect(await page.textContent(td), key).toBe('not a full step');
      }
      for (const key of ['exposed', 'overlap', 'idle', 'peak', 'ag', 'rs']) {
        const td = `[data-testid="metrics"] tr[data-metric="${key}"] td[data-side="b"]`;
        expect(await page.textContent(td), key).toMatch(/ to the hang$/);
      }
      expect(await page.textContent('[data-testid="metrics"] tr[data-metric="peak"] td[data-side="b"]')).toBe(
        `${fmtBytes(b.live)} to the hang`,
      );
      const deltas = await page.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
      expect(deltas.every((d) => d === '–')).toBe(true);
      // B's allocator peaks are the un-hung schedule's: no text on the page shows them
      const body = (await page.textContent('body'))!;
      expect(body).not.toContain(fmtBytes(b.allocated!));
      expect(body).not.toContain(fmtBytes(b.reserved!));
      // nor an HBM claim made from them; the headline says why there is no comparison
      expect(await page.textContent('[data-testid="memory-hbm-note"]')).toContain('B hangs: not a full step');
      expect(await page.locator('[data-testid="timeline-b"] [data-testid="hbm-warn"]').count()).toBe(0);
      const headline = (await page.textContent('[data-testid="headline"]'))!;
      expect(headline).toMatch(/not a full step, so no comparison is drawn/);
      expect(headline).not.toMatch(/stops there/);
      const legend = (await page.locator('[data-testid="memory-chart"] + .chart-legend').textContent())!;
      expect(legend).toContain(`${MEMORY_NAMES.live} ${fmtBytes(b.curve!.peak)} to the hang`);

      // the caption against what the timeline draws: the probe draws every one of B's events, on its ranks
      const probe = await probeOf(page, 'b');
      expect(probe.events).toBe(b.events);
      expect(probe.lanes).toBe((await rankStreams(page, 'b')).pairs);
      const caption = (await page.textContent('[data-testid="story-caption"]'))!;
      expect(caption).not.toMatch(/stops there/);
      const marker = /the red marker shows where \(rank (\d+), ([^)]+)\)/.exec(caption);
      expect(marker?.slice(1)).toEqual([String(b.mismatch!.rank), fmtUs(b.mismatch!.timeUs)]);
      const span = new RegExp(
        'its ranks stop between (.+?) \\(rank (\\d+)\\) and (.+?) \\(rank (\\d+)\\); ' +
          '(\\d+) of the (\\d+) ranks drawn run on past the marker',
      ).exec(caption);
      expect(span).not.toBeNull();
      const first = b.ends.reduce((x, y) => (y[1] < x[1] ? y : x));
      const last = b.ends.reduce((x, y) => (y[1] > x[1] ? y : x));
      expect(span!.slice(1)).toEqual([
        fmtUs(first[1]),
        String(first[0]),
        fmtUs(last[1]),
        String(last[0]),
        String(b.ends.filter(([, t]) => t > b.mismatch!.timeUs).length),
        String(b.ends.length),
      ]);
      // and the claim that matters: ranks do run past the marker, so "stops there" would be false
      expect(last[1]).toBeGreaterThan(b.mismatch!.timeUs);
      expect(caption).toContain(
        `A runs its full ${fmtUs(
          await page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.a!.metrics.stepTimeUs),
        )} step`,
      );
      expect(app.pageErrors).toEqual([]);
    },
    SIM_TIMEOUT,
  );
});

describe('live words', () => {
  const LIVE_TIMEOUT = 180_000;

  it(
    'a live B on auto kernels names the kernels used; the advice is what Run live A+B gives',
    async () => {
      const page = app.page;
      await openAt(page, '?model=tiny&ranks=4&live.steps=1');
      await page.click('[data-testid="live-run"]');
      await page.waitForFunction(
        () => {
          const s = window.__FSDP_SIM__!.store.getState();
          return !s.live.running && s.live.side === 'b' && s.sides.b?.source === 'live' && s.sides.b.run !== undefined;
        },
        undefined,
        { timeout: LIVE_TIMEOUT },
      );
      const device = await page.evaluate(() => window.__FSDP_SIM__!.store.getState().live.device);
      const used = device.startsWith('webgpu') ? 'WebGPU kernels (auto)' : 'CPU kernels (auto';
      await expect.poll(() => page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('run');
      const headline = (await page.textContent('[data-testid="headline"]'))!;
      expect(headline).toContain(`B: ${used}`);
      expect(headline).not.toMatch(/auto kernels/);
      expect(headline).toContain(liveAdvice('preset')); // the default live timing
      // the glossary says what auto means
      expect(termById('kernels').text).toMatch(/'auto' tries WebGPU and falls back to CPU/);
      // and Run live A+B gives what the advice said: both live, compared, on the cost model, not measured
      await page.click('[data-testid="live-run-both"]');
      await page.waitForFunction(
        () => {
          const s = window.__FSDP_SIM__!.store.getState();
          return (
            !s.live.running &&
            s.live.side === 'b' &&
            s.sides.a?.source === 'live' &&
            s.sides.a.run !== undefined &&
            s.sides.b?.run !== undefined &&
            s.live.step === s.live.steps
          );
        },
        undefined,
        { timeout: LIVE_TIMEOUT },
      );
      await expect.poll(() => page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('compare');
      for (const side of ['a', 'b']) {
        expect(await page.textContent(`[data-testid="clock-${side}"]`)).toMatch(/\(not measured\)/);
      }
      expect(app.pageErrors).toEqual([]);
    },
    LIVE_TIMEOUT * 2,
  );
});
