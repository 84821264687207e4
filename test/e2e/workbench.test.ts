// The research workbench in headless Chromium: a sweep drawn as one line per backend whose point
// click loads its config (and the sweep lives in the URL, stops on Stop, exports CSV); the diff
// table sorted and filtered, a row selecting its collective on both timelines.

import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALPHA_US, BETA, SCALES, kinetoFiles } from '../helpers/kineto_synth';
import { launchBrowser, startPreview } from './harness';
import { waitForApp, skipTour } from './page';

let browser: Browser;
let context: BrowserContext;
let page: Page;
let srv: { url: string; close: () => Promise<void> };
const pageErrors: string[] = [];

beforeAll(async () => {
  srv = await startPreview();
  browser = await launchBrowser();
  context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  await skipTour(context);
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${srv.url}?model=tiny&ranks=4`); // sweeps of tiny run in seconds; the first screen is llama3-8b
  await waitForApp(page);
});

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

const sweepState = () =>
  page.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState();
    return {
      running: s.sweepRunning,
      rows: s.sweepRows.map((r) => ({
        point: r.point,
        backend: r.backend,
        step: r.stepTimeMs,
        values: r.values,
      })),
      progress: s.sweepProgress,
    };
  });

async function runSweep(field: string, values: string): Promise<void> {
  await page.selectOption('[data-testid="sweep-field-0"]', field);
  await page.fill('[data-testid="sweep-values-0"]', values);
  await page.click('[data-testid="sweep-run"]');
}

describe('sweep panel', () => {
  it('draws one line per backend against the varied field; hover shows a point, click loads it', async () => {
    await runSweep('ranks', '2,4,8');
    await page.waitForFunction(
      () => {
        const s = window.__FSDP_SIM__!.store.getState();
        return !s.sweepRunning && s.sweepRows.length === 6;
      },
      null,
      { timeout: 30_000 },
    );
    const chart = '[data-testid="sweep-chart-step"]';
    await page.waitForSelector(`${chart} circle`);
    expect(await page.locator(`${chart} path.series`).count()).toBe(2);
    expect(await page.locator(`${chart} circle`).count()).toBe(6);
    for (const id of ['exposed', 'peak', 'colls'])
      expect(await page.locator(`[data-testid="sweep-chart-${id}"] path.series`).count()).toBe(2);
    // peak memory ticks are round in the unit on screen (GiB), not round numbers of bytes
    const peakTicks = await page
      .locator('[data-testid="sweep-chart-peak"] g.chart-axis')
      .nth(1)
      .locator('.tick text')
      .allTextContents();
    expect(peakTicks.length).toBeGreaterThan(2);
    for (const t of peakTicks) expect(t).toMatch(/^\d+(\.\d)?\s(GiB|MiB)$/);
    // the plotted heights follow the rows: a slower point sits higher (smaller cy)
    const st = await sweepState();
    const b = st.rows.filter((r) => r.backend === 'aot_eager');
    const cy = async (p: number) =>
      Number(await page.locator(`${chart} g[data-points="aot_eager"] circle[data-point="${p}"]`).getAttribute('cy'));
    const order = [...b].sort((x, y) => x.step - y.step).map((r) => r.point);
    expect(await cy(order[0])).toBeGreaterThan(await cy(order[2]));
    await page.hover(`${chart} g[data-points="aot_eager"] circle[data-point="1"]`);
    const hover = await page.textContent('[data-testid="sweep-hover"]');
    expect(hover).toContain('ranks = 4');
    expect(hover).toContain(`aot_eager: step ${b.find((r) => r.point === 1)!.step.toFixed(2)} ms`);
    await page.click(`${chart} g[data-points="aot_eager"] circle[data-point="2"]`);
    await page.waitForFunction(() => window.__FSDP_SIM__!.store.getState().sides.a?.worldSize === 8, null, {
      timeout: 30_000,
    });
    expect(await page.evaluate(() => window.__FSDP_SIM__!.store.getState().config.ranks)).toBe(8);
    await page.waitForFunction(() => location.search.includes('ranks=8') && location.search.includes('sweep='));
    expect(new URLSearchParams(await page.evaluate(() => location.search)).get('sweep')).toBe('ranks=2,4,8');
  });

  it('exports the sweep as CSV', async () => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="sweep-csv"]')]);
    const lines = readFileSync((await dl.path())!, 'utf8').split('\n');
    expect(dl.suggestedFilename()).toBe('fsdp-sim-sweep.csv');
    expect(lines[0].startsWith('ranks,backend,stepTimeMs,')).toBe(true);
    expect(lines).toHaveLength(7);
  });

  it('stops a running sweep on Stop, keeping the points done so far', async () => {
    await runSweep('seed', '0:400:1');
    await page.waitForFunction(() => (window.__FSDP_SIM__!.store.getState().sweepProgress?.done ?? 0) >= 2, null, {
      timeout: 30_000,
    });
    await page.click('[data-testid="sweep-stop"]');
    const at = await sweepState();
    expect(at.running).toBe(false);
    // what is checked is that nothing more arrives, which no condition can signal: give a late point time to land
    await page.waitForTimeout(500);
    const later = await sweepState();
    expect(later.rows.length).toBe(at.rows.length);
    expect(later.progress!.done).toBeLessThan(401);
    expect(later.rows.length).toBe(later.progress!.done * 2);
  });

  it('runs the sweep a link carries, and names a bad field in it', async () => {
    const p2 = await context.newPage();
    await p2.goto(`${srv.url}?sweep=${encodeURIComponent('autobucketing.max_in_flight_gb=0,5')}`);
    await p2.waitForFunction(
      () => {
        const s = window.__FSDP_SIM__!.store.getState();
        return !s.sweepRunning && s.sweepRows.length === 4;
      },
      null,
      { timeout: 30_000 },
    );
    expect(await p2.locator('[data-testid="sweep-chart-exposed"] circle').count()).toBe(4);
    await p2.goto(`${srv.url}?sweep=${encodeURIComponent('autobucketing.max_in_flight=1')}`);
    const notice = await p2.waitForSelector('[data-testid="notice-error"]');
    expect(await notice.textContent()).toMatch(
      /sweep ignored: --vary field must be one of \[.*\], got "autobucketing\.max_in_flight"/,
    );
    await p2.close();
  });
});

describe('diff table', () => {
  const rowsOf = () =>
    page.$$eval('[data-testid="diff-table"] tbody tr', (trs) =>
      trs.map((tr) => ({
        name: tr.getAttribute('data-name')!,
        kind: tr.children[1].textContent,
        exposedB: Number(tr.querySelector('[data-col="exposedB"]')!.textContent),
      })),
    );

  it('lists every collective, sorts, filters and shows the top exposed', async () => {
    await page.goto(srv.url);
    await waitForApp(page);
    await page.click('[data-testid="diff-toggle"]');
    await page.waitForSelector('[data-testid="diff-table"] tbody tr');
    const colls = await page.evaluate(
      () => window.__FSDP_SIM__!.store.getState().sides.a!.schedule!.graph.nodes.filter((n) => n.collective).length,
    );
    expect((await rowsOf()).length).toBe(colls);
    // the totals in the unit their size calls for (one duration formatter), not '176649.8 µs'
    const summary = (await page.textContent('[data-testid="diff-summary"]')) ?? '';
    expect(summary).toMatch(/exposed \d+(\.\d+)? (µs|ms|s) under \S+, \d+(\.\d+)? (µs|ms|s) under/);
    expect(summary).not.toMatch(/\d{5,}/);
    await page.click('[data-testid="diff-sort-exposedB"]');
    const sorted = (await rowsOf()).map((r) => r.exposedB);
    expect(sorted).toEqual([...sorted].sort((x, y) => y - x));
    expect(sorted[0]).toBeGreaterThan(sorted[sorted.length - 1]);
    await page.selectOption('[data-testid="diff-kind"]', 'reduce_scatter');
    const rs = await rowsOf();
    expect(rs.length).toBeGreaterThan(0);
    expect(rs.every((r) => r.kind === 'reduce_scatter')).toBe(true);
    await page.check('[data-testid="diff-exposed-b"]');
    expect((await rowsOf()).every((r) => r.exposedB > 0)).toBe(true);
    await page.selectOption('[data-testid="diff-kind"]', '');
    await page.uncheck('[data-testid="diff-exposed-b"]');
    await page.fill('[data-testid="diff-search"]', 'layers.1.');
    const l1 = await rowsOf();
    expect(l1.length).toBeGreaterThan(0);
    expect(l1.every((r) => r.name.includes('layers.1.'))).toBe(true);
    await page.fill('[data-testid="diff-search"]', '');
    await page.click('[data-testid="diff-top"]');
    const top = await rowsOf();
    expect(top.length).toBe(Math.min(20, colls));
    expect(top[0].exposedB).toBe(sorted[0]);
  });

  it('selects the clicked collective on both timelines', async () => {
    const name = (await rowsOf())[0].name;
    await page.click(`[data-testid="diff-table"] tbody tr[data-name="${name}"]`);
    const want = await page.evaluate((n) => {
      const s = window.__FSDP_SIM__!.store.getState();
      const nodeOf = (side: 'a' | 'b') =>
        s.sides[side]!.schedule!.buckets.find((b) => b.members.includes(n))?.node ?? n;
      const idx = (side: 'a' | 'b') =>
        s.sides[side]!.events.findIndex((e) => e.rank === 0 && e.name === nodeOf(side) && e.stream !== 'compute');
      return { a: idx('a'), b: idx('b') };
    }, name);
    expect(want.a).toBeGreaterThanOrEqual(0);
    expect(want.b).toBeGreaterThanOrEqual(0);
    await page.waitForFunction((w) => {
      const t = window.__FSDP_SIM__?.timelines;
      return t?.a?.selected === w.a && t.b?.selected === w.b;
    }, want);
    expect(await page.getAttribute(`[data-testid="diff-table"] tbody tr[data-name="${name}"]`, 'aria-selected')).toBe(
      'true',
    );
    expect(pageErrors).toEqual([]);
  });
});

describe('calibration panel', () => {
  it('fits a synthetic run, draws estimated vs measured, and applies the ring to the config', async () => {
    await page.goto(`${srv.url}?model=small&ranks=4`);
    await waitForApp(page);
    const files = kinetoFiles(false).map((f) => ({
      name: f.name,
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(f.json)),
    }));
    await page.setInputFiles('[data-testid="calib-files"]', files);
    await page.waitForSelector('[data-testid="calib-scatter"] circle');
    const samples =
      files.length *
      (kinetoFiles(false)[0].json as { traceEvents: { name: string }[] }).traceEvents.filter((e) =>
        /ncclDevKernel_(AllGather|ReduceScatter)/.test(e.name),
      ).length;
    expect(await page.locator('[data-testid="calib-scatter"] circle').count()).toBe(samples);
    expect(await page.locator('[data-testid="calib-diagonal"]').count()).toBe(1);
    const alpha = Number(await page.textContent('[data-testid="calib-groups"] td[data-col="alpha"]'));
    const beta = Number(await page.textContent('[data-testid="calib-groups"] td[data-col="beta"]'));
    expect(Math.abs(alpha / ALPHA_US - 1)).toBeLessThan(0.02);
    expect(Math.abs((beta * 1e9) / BETA - 1)).toBeLessThan(0.02);
    for (const cls of ['matmul', 'attention', 'elementwise'] as const) {
      const scale = Number(
        await page.textContent(`[data-testid="calib-scales"] tr[data-cls="${cls}"] td[data-col="scale"]`),
      );
      expect(Math.abs(scale / SCALES[cls] - 1)).toBeLessThan(0.02);
    }
    await page.click('[data-testid="calib-apply"]');
    await page.waitForFunction(
      () => location.search.includes('latencyUs=') && location.search.includes('bandwidthGBps='),
    );
    const cfg = await page.evaluate(() => window.__FSDP_SIM__!.store.getState().config);
    expect(cfg.network).toBe('pcie-ethernet');
    expect(cfg.latencyUs).toBeCloseTo(alpha, 3);
    expect(pageErrors).toEqual([]);
  });
});
