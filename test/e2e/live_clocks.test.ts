// Honest live clocks in headless Chromium: each timeline's header names its clock; a measured
// live side next to a simulated one gets no B-vs-A change (a note says why) and no headline
// comparison; "Run live A+B" runs both backends live on the same workers, after which both
// sides are measured and the deltas return. The adapter is named before any run.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, startPreview } from './harness';
import { setField, waitForApp } from './page';

let browser: Browser;
let page: Page;
let previewSrv: { url: string; close: () => Promise<void> };
const pageErrors: string[] = [];
const LIVE_TIMEOUT = 90_000;

async function deltas(p: Page): Promise<string[]> {
  return p.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
}

async function sources(p: Page): Promise<[string | undefined, string | undefined]> {
  return p.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState().sides;
    return [s.a?.source, s.b?.source] as [string | undefined, string | undefined];
  });
}

beforeAll(async () => {
  previewSrv = await startPreview();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(() => localStorage.setItem('fsdp-sim:tour-done', '1'));
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(previewSrv.url);
  await waitForApp(page);
});

afterAll(async () => {
  await browser?.close();
  await previewSrv?.close();
});

describe('live clocks', () => {
  it('names the adapter before any run and each side\'s clock in its header', async () => {
    await page.waitForSelector('[data-testid="live-adapter"]');
    expect((await page.textContent('[data-testid="live-adapter"]'))!.length).toBeGreaterThan(3);
    expect(await page.textContent('[data-testid="clock-a"]')).toMatch(/simulated time \(cost model\)/);
    expect(await page.textContent('[data-testid="clock-b"]')).toMatch(/simulated time \(cost model\)/);
    expect((await deltas(page)).filter((d) => d !== '–').length).toBeGreaterThan(3);
  });

  it('a measured live B beside simulated A shows no cross-clock delta', async () => {
    await page.selectOption('[data-testid="cfg-live-kernels"]', 'cpu');
    await page.selectOption('[data-testid="cfg-live-timing"]', 'measured');
    await setField(page, 'live.steps', '2');
    await page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    await page.click('[data-testid="live-run"]');
    // the first status names the stage, not "step 0/2 · 0.00 steps/s"
    await expect.poll(() => page.textContent('[data-testid="live-status"]'), { timeout: LIVE_TIMEOUT }).toMatch(/starting \d+ workers|step [12]\/2/);
    await page.waitForSelector('[data-testid="live-run"]', { timeout: LIVE_TIMEOUT });
    expect(await sources(page)).toEqual(['sim', 'live']);
    expect(await page.textContent('[data-testid="clock-b"]')).toMatch(/real time, measured/);
    expect(await page.textContent('[data-testid="clock-a"]')).toMatch(/simulated/);
    expect(await deltas(page)).toEqual((await deltas(page)).map(() => '–'));
    expect(await page.locator('[data-testid="metrics"] td.better, [data-testid="metrics"] td.worse').count()).toBe(0);
    expect(await page.textContent('[data-testid="metrics-clock-note"]')).toMatch(/different clocks/i);
    expect(await page.textContent('[data-testid="headline"]')).toMatch(/different clocks/);
    expect(await page.textContent('[data-testid="live-status"]')).toMatch(/step 2\/2 · \d+ ms\/step/);
    // Explain and the memory chart stay available: the plan the workers ran
    await page.selectOption('[data-testid="explain-side"]', 'b');
    await page.waitForSelector('[data-testid="explain-live-plan"]');
    expect(await page.locator('[data-testid="explain-reasons"] li').count()).toBeGreaterThan(0);
    const legend = await page.locator('[data-testid="memory-chart"] + .chart-legend').textContent();
    expect(legend).toMatch(/B aot_eager_autobucketing \(live\).*simulated for the live plan/);
    expect(await page.locator('[data-testid="memory-chart"] path').count()).toBeGreaterThan(1);
  });

  it('Run live A+B puts both sides on the measured clock and compares them', async () => {
    await page.click('[data-testid="live-run-both"]');
    await expect.poll(() => sources(page), { timeout: LIVE_TIMEOUT }).toEqual(['live', 'live']);
    await expect.poll(() => page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      return !s.live.running && s.live.side === 'b' && s.live.step === s.live.steps;
    }), { timeout: LIVE_TIMEOUT }).toBe(true);
    await page.waitForSelector('[data-testid="live-run"]');
    expect(await page.textContent('[data-testid="clock-a"]')).toMatch(/real time, measured/);
    expect(await page.textContent('[data-testid="clock-b"]')).toMatch(/real time, measured/);
    expect(await page.locator('[data-testid="metrics-clock-note"]').count()).toBe(0);
    const stepDelta = await page.textContent('[data-testid="metrics"] td[data-delta="step"]');
    expect(stepDelta).toMatch(/^[−+][\d.]+ %$|^0$|×$/);
    expect(await page.textContent('[data-testid="headline"]')).toMatch(/^autobucketing vs aot_eager \(both live, one clock\): step [−+]/);
  });

  it('preset timing says its live timeline is cost-model time, not measured', async () => {
    await page.selectOption('[data-testid="cfg-live-timing"]', 'preset');
    await page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    await page.click('[data-testid="live-run"]');
    await expect.poll(() => page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.source), { timeout: LIVE_TIMEOUT }).toBe('live');
    await page.waitForSelector('[data-testid="live-run"]', { timeout: LIVE_TIMEOUT });
    expect(await page.textContent('[data-testid="clock-b"]')).toMatch(/cost-model time replayed for the live schedule \(not measured\)/);
    // editing a live.* field afterwards keeps the live timeline (no re-simulation)
    await setField(page, 'live.steps', '5');
    await page.waitForTimeout(400);
    expect(await page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.source)).toBe('live');
    expect(pageErrors).toEqual([]);
  });
});
