// The app on a 390×844 phone (touch, mobile viewport) and a 820×1180 tablet in headless
// Chromium: no horizontal overflow, full-width stacked timelines, config in a drawer, panels in
// one column, tap selects an event, touch drag pans and pinch zooms (real touch events via CDP).

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { TOUR_STEPS } from '../../src/ui/panels/tour';
import { GUTTER_PX } from '../../src/ui/timeline/draw';
import { artifactsDir, launchBrowser, startPreview } from './harness';
import { nextFrames, probeOf, waitForApp, windowOf, skipTour } from './page';

let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let previewSrv: { url: string; close: () => Promise<void> };
let art: string;
const pageErrors: string[] = [];

async function overflow(p: Page): Promise<{ scrollWidth: number; clientWidth: number; offenders: string[] }> {
  return p.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const offenders = [...document.querySelectorAll<HTMLElement>('body *')]
      .filter(
        (e) =>
          e.getBoundingClientRect().right > w + 0.5 &&
          getComputedStyle(e).visibility !== 'hidden' &&
          !e.closest('.sidebar'),
      )
      .slice(0, 5)
      .map((e) => `${e.tagName}.${e.className}`);
    return { scrollWidth: document.documentElement.scrollWidth, clientWidth: w, offenders };
  });
}

type TouchPt = { x: number; y: number; id: number };

async function touch(type: 'touchStart' | 'touchMove' | 'touchEnd', points: TouchPt[]): Promise<void> {
  await cdp.send('Input.dispatchTouchEvent', {
    type,
    touchPoints: type === 'touchEnd' ? [] : points.map((p) => ({ x: p.x, y: p.y, id: p.id })),
  });
}

/** Canvas-relative centre of the first all-gather of B on rank 0, zoomed so it is wide. */
async function targetOnB(p: Page): Promise<{ x: number; y: number; name: string }> {
  const t = await p.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState();
    const ev = s.sides.b!.events;
    const i = ev.findIndex((e) => e.rank === 0 && e.kind === 'all_gather');
    const mid = ev[i].start + ev[i].dur / 2;
    s.setWindow({ startUs: mid - 3 * ev[i].dur, endUs: mid + 3 * ev[i].dur });
    const lanes = [...new Set(ev.filter((e) => e.rank === 0).map((e) => e.stream))].sort((x, y) =>
      x === 'compute' ? -1 : y === 'compute' ? 1 : x.localeCompare(y),
    );
    return { mid, lane: lanes.indexOf(ev[i].stream), name: ev[i].name };
  });
  const canvas = p.locator('[data-testid="timeline-b"] canvas');
  await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' })); // a tap must land inside the viewport
  await nextFrames(p, 3);
  const box = (await canvas.boundingBox())!;
  const tops = (await probeOf(p, 'b')).laneCentresPx;
  const [w0, w1] = await windowOf(p, 'b');
  const x = GUTTER_PX + ((t.mid - w0) / (w1 - w0)) * (box.width - GUTTER_PX - 8);
  return { x: box.x + x, y: box.y + tops[t.lane], name: t.name };
}

beforeAll(async () => {
  art = await artifactsDir();
  previewSrv = await startPreview();
  browser = await launchBrowser();
  context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  });
  await skipTour(context);
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  cdp = await context.newCDPSession(page);
  await page.goto(`${previewSrv.url}?model=tiny&ranks=4`); // the ranks edit below changes 4 → 8
  await waitForApp(page);
});

afterAll(async () => {
  await browser?.close();
  await previewSrv?.close();
});

describe('phone 390×844', () => {
  it('has no horizontal overflow; the timelines take the full width and stack; panels flow in one column', async () => {
    const o = await overflow(page);
    expect(o.offenders).toEqual([]);
    expect(o.scrollWidth).toBeLessThanOrEqual(390);
    const a = (await page.locator('[data-testid="timeline-a"] canvas').boundingBox())!;
    const b = (await page.locator('[data-testid="timeline-b"] canvas').boundingBox())!;
    expect(a.width).toBeGreaterThanOrEqual(300);
    expect(b.width).toBeGreaterThanOrEqual(300);
    expect(b.y).toBeGreaterThan(a.y + a.height - 1); // stacked
    const panels = await Promise.all(
      ['metrics', 'explain', 'details'].map((id) => page.locator(`[data-testid="${id}"]`).boundingBox()),
    );
    for (let i = 1; i < panels.length; i++)
      expect(panels[i]!.y).toBeGreaterThanOrEqual(panels[i - 1]!.y + panels[i - 1]!.height - 1); // no overlap
    for (const p of panels) expect(p!.width).toBeGreaterThan(330);
    // the config sits in a closed drawer until asked for
    expect(await page.locator('[data-testid="config"]').isVisible()).toBe(false);
    await page.screenshot({ path: join(art, 'phone_390.png') });
    expect(pageErrors).toEqual([]);
  });

  it('opens the config drawer, edits a field, and closes it', async () => {
    await page.tap('[data-testid="drawer-toggle"]');
    await page.locator('[data-testid="config"]').waitFor({ state: 'visible' });
    // slid in: the transition has ended
    await page.waitForFunction(() => getComputedStyle(document.querySelector('.sidebar')!).transform === 'none');
    const box = (await page.locator('.sidebar').boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(art, 'phone_390_drawer.png') });
    await page.fill('[data-testid="cfg-ranks"]', '8');
    await page.press('[data-testid="cfg-ranks"]', 'Enter');
    await expect.poll(() => page.evaluate(() => window.__FSDP_SIM__!.store.getState().config.ranks)).toBe(8);
    await page.tap('[data-testid="drawer-close"]');
    await page.locator('[data-testid="config"]').waitFor({ state: 'hidden' });
    await page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    expect((await overflow(page)).scrollWidth).toBeLessThanOrEqual(390);
  });

  it('a tap on an event selects it and shows its details', async () => {
    const t = await targetOnB(page);
    await page.touchscreen.tap(t.x, t.y);
    await page.waitForSelector('[data-testid="details"] dl');
    expect(await page.textContent('[data-testid="details"]')).toContain(t.name);
    const sel = await page.evaluate(() => window.__FSDP_SIM__!.store.getState().selection);
    expect(sel?.side).toBe('b');
    // a tap on empty gutter space clears it
    const box = (await page.locator('[data-testid="timeline-b"] canvas').boundingBox())!;
    await page.touchscreen.tap(box.x + GUTTER_PX + 4, box.y + box.height - 2);
    await expect.poll(() => page.evaluate(() => window.__FSDP_SIM__!.store.getState().selection)).toBeNull();
  });

  it('a horizontal touch drag pans both timelines; a pinch zooms', async () => {
    await page.locator('[data-testid="timeline-a"] canvas').evaluate((c) => c.scrollIntoView({ block: 'center' }));
    const box = (await page.locator('[data-testid="timeline-a"] canvas').boundingBox())!;
    await page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      s.setWindow({ startUs: s.limitUs * 0.3, endUs: s.limitUs * 0.5 });
    });
    await nextFrames(page, 2);
    const w0 = await windowOf(page, 'a');
    const y = box.y + 30;
    const x0 = box.x + box.width * 0.8;
    await touch('touchStart', [{ x: x0, y, id: 1 }]);
    for (let k = 1; k <= 6; k++) await touch('touchMove', [{ x: x0 - k * 25, y, id: 1 }]);
    await touch('touchEnd', []);
    await nextFrames(page, 3);
    const w1 = await windowOf(page, 'a');
    expect(w1[0]).toBeGreaterThan(w0[0]); // dragged left: later times come into view
    // a pan keeps the width (to ± 0.001 µs: the pan moves both ends by the same float step)
    expect(Math.abs(w1[1] - w1[0] - (w0[1] - w0[0]))).toBeLessThanOrEqual(0.001 + 1e-9);
    expect(await windowOf(page, 'b')).toEqual(w1);
    expect(await page.evaluate(() => window.__FSDP_SIM__!.store.getState().selection)).toBeNull(); // a drag is not a tap
    // pinch: two fingers moving apart zoom in around their midpoint
    const cx = box.x + GUTTER_PX + (box.width - GUTTER_PX) / 2;
    await touch('touchStart', [
      { x: cx - 30, y, id: 1 },
      { x: cx + 30, y, id: 2 },
    ]);
    for (let k = 1; k <= 5; k++)
      await touch('touchMove', [
        { x: cx - 30 - k * 12, y, id: 1 },
        { x: cx + 30 + k * 12, y, id: 2 },
      ]);
    await touch('touchEnd', []);
    await nextFrames(page, 3);
    const w2 = await windowOf(page, 'a');
    expect(w2[1] - w2[0]).toBeLessThan((w1[1] - w1[0]) * 0.6); // 60 px → 180 px apart: ~3× in
    expect(pageErrors).toEqual([]);
  });
});

describe('phone tour', () => {
  it('fits the screen and points at the drawer button when the config is tucked away', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await ctx.newPage();
    await p.goto(previewSrv.url);
    await waitForApp(p);
    const tour = p.locator('[data-testid="tour"]');
    await tour.waitFor();
    const box = (await tour.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    const knobs = TOUR_STEPS.findIndex((s) => s.title === 'The knobs');
    for (let k = 0; k < knobs; k++) await p.tap('[data-testid="tour-next"]');
    expect(await tour.getAttribute('data-step')).toBe(String(knobs));
    expect(await p.getAttribute('.tour-target', 'data-testid')).toBe('drawer-toggle');
    expect((await overflow(p)).scrollWidth).toBeLessThanOrEqual(390);
    await p.tap('[data-testid="tour-skip"]');
    await tour.waitFor({ state: 'detached' });
    await ctx.close();
  });
});

describe('tablet 820×1180', () => {
  it('uses the drawer layout without overflow and keeps wide timelines', async () => {
    const ctx = await browser.newContext({ viewport: { width: 820, height: 1180 }, isMobile: true, hasTouch: true });
    await skipTour(ctx);
    const p = await ctx.newPage();
    await p.goto(previewSrv.url);
    await waitForApp(p);
    const o = await overflow(p);
    expect(o.offenders).toEqual([]);
    expect(o.scrollWidth).toBeLessThanOrEqual(820);
    expect((await p.locator('[data-testid="timeline-a"] canvas').boundingBox())!.width).toBeGreaterThan(760);
    await p.screenshot({ path: join(art, 'tablet_820.png') });
    await ctx.close();
  });
});
