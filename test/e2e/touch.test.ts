// The app on a 390×844 phone with touch, in headless Chromium: the headline and timeline A's first
// lanes on the first screen, no metrics cell cut, every definition (metric name, legend item,
// knob) opening on a tap, touch words in the hints and the tour, the tapped event's details
// under its timeline (no card over the other ranks), and tour cards beside what they point at.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TERMS } from '../../src/ui/glossary';
import { TOUR_STEPS } from '../../src/ui/panels/tour';
import { GUTTER_PX } from '../../src/ui/timeline/draw';
import { STORIES } from '../../src/ui/stories';
import { artifactsDir, launchBrowser, startPreview } from './harness';
import { nextFrames, probeOf, waitForApp, windowOf, skipTour } from './page';
import { cardOverlapsTarget, namedControlsMissing } from './tour_checks';

const VIEW = { width: 390, height: 844 };
// explicit config: the tests do not lean on whatever the default is
const QUERY = '?model=llama3-8b&ranks=8';

let browser: Browser;
let page: Page;
let srv: { url: string; close: () => Promise<void> };
let art: string;
const pageErrors: string[] = [];

async function phone(tourDone: boolean): Promise<{ ctx: BrowserContext; p: Page }> {
  const ctx = await browser.newContext({ viewport: VIEW, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  if (tourDone) await skipTour(ctx);
  const p = await ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(e.message));
  await p.goto(`${srv.url}${QUERY}`);
  await waitForApp(p);
  return { ctx, p };
}

beforeAll(async () => {
  art = await artifactsDir();
  srv = await startPreview();
  browser = await launchBrowser();
  ({ p: page } = await phone(true));
});

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

const definition = (id: string) => {
  const t = TERMS.find((x) => x.id === id)!;
  return `${t.term}: ${t.text}`;
};

describe('phone 390×844, touch: the first screen', () => {
  it("shows the headline and timeline A's first two lanes before any scrolling", async () => {
    const head = (await page.locator('[data-testid="headline"]').boundingBox())!;
    expect(head.y + head.height).toBeLessThanOrEqual(VIEW.height);
    const canvas = (await page.locator('[data-testid="timeline-a"] canvas').boundingBox())!;
    const tops = (await probeOf(page, 'a')).laneCentresPx;
    expect(tops.length).toBeGreaterThanOrEqual(2);
    expect(canvas.y + tops[1] + 8).toBeLessThanOrEqual(VIEW.height); // lane 2's bar, whole
    await page.screenshot({ path: join(art, 'touch_first_screen.png') });
  });

  it('cuts no cell of the metrics table: every scroll width within its client width', async () => {
    const cut = await page.evaluate(() => {
      const table = document.querySelector<HTMLElement>('[data-testid="metrics"] table')!;
      const section = document.querySelector<HTMLElement>('[data-testid="metrics"]')!;
      const cells = [...table.querySelectorAll<HTMLElement>('th, td')];
      return {
        n: cells.length,
        cells: cells
          .filter((c) => c.scrollWidth > c.clientWidth)
          .map((c) => `${c.textContent}: ${c.scrollWidth} > ${c.clientWidth}`),
        table: table.scrollWidth <= section.clientWidth,
        section: section.scrollWidth <= section.clientWidth,
      };
    });
    expect(cut.n).toBeGreaterThan(20);
    expect(cut.cells).toEqual([]);
    expect(cut.table).toBe(true);
    expect(cut.section).toBe(true);
  });
});

describe('phone 390×844, touch: definitions open on a tap', () => {
  it('a tap on a metric name shows its definition; a second tap closes it', async () => {
    const name = page.locator('[data-testid="metrics"] tr[data-metric="exposed"] .term');
    await name.scrollIntoViewIfNeeded();
    await name.tap();
    const card = page.locator('[data-testid="term-card"]');
    await card.waitFor();
    expect(await card.textContent()).toBe(definition('exposed'));
    const box = (await card.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(VIEW.width); // on screen, not clipped
    await name.tap();
    await card.waitFor({ state: 'detached' });
  });

  it('a tap on a legend item shows its definition; a tap elsewhere closes it', async () => {
    const item = page.locator('[data-testid="legend"] [data-term="reduce_scatter"]');
    await item.scrollIntoViewIfNeeded();
    await item.tap();
    const card = page.locator('[data-testid="term-card"]');
    await card.waitFor();
    expect(await card.textContent()).toBe(definition('reduce_scatter'));
    await page.tap('[data-testid="headline"]');
    await card.waitFor({ state: 'detached' });
  });

  it('a tap on a knob shows what it does under it', async () => {
    await page.tap('[data-testid="drawer-toggle"]');
    // slid in
    await page.waitForFunction(() => getComputedStyle(document.querySelector('.sidebar')!).transform === 'none');
    await page.tap('[data-testid="cfg-autobucketing-max_in_flight_gb"]');
    const help = page.locator('[data-testid="cfg-autobucketing-max_in_flight_gb-help"]');
    await help.waitFor();
    expect(await help.textContent()).toContain('schedule_overlap_bucketing(max_in_flight_gb=');
    expect(await help.isVisible()).toBe(true);
    await page.tap('[data-testid="drawer-close"]');
    await page.locator('[data-testid="config"]').waitFor({ state: 'hidden' });
  });
});

describe('phone 390×844, touch: words and details for the hand on the screen', () => {
  it('hints name touch gestures, not the wheel or keys', async () => {
    const hint = page.locator('[data-testid="nav-hint"]');
    expect(await hint.getAttribute('data-input')).toBe('touch');
    const words = `${await hint.textContent()} ${await page.textContent('[data-testid="details-hint"]')}`;
    expect(words).toMatch(/pinch/i);
    expect(words).toMatch(/tap/i);
    expect(words).not.toMatch(/wheel|W\/S|A\/D|click|hover/i);
    expect(await page.textContent('[data-testid="sweep-hint"]')).toMatch(/tap a point/);
  });

  it("a tapped event's details appear under its timeline, with no card over the other ranks", async () => {
    const t = await page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      const ev = s.sides.b!.events;
      const i = ev.findIndex((e) => e.rank === 0 && e.kind === 'all_gather');
      const mid = ev[i].start + ev[i].dur / 2;
      s.setWindow({ startUs: mid - 3 * ev[i].dur, endUs: mid + 3 * ev[i].dur });
      return { mid, name: ev[i].name, stream: ev[i].stream };
    });
    const canvas = page.locator('[data-testid="timeline-b"] canvas');
    await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
    await nextFrames(page, 3);
    const box = (await canvas.boundingBox())!;
    const tops = (await probeOf(page, 'b')).laneCentresPx;
    const [w0, w1] = await windowOf(page, 'b');
    const x = box.x + GUTTER_PX + ((t.mid - w0) / (w1 - w0)) * (box.width - GUTTER_PX - 8);
    await page.touchscreen.tap(x, box.y + tops[t.stream === 'compute' ? 0 : 1]);
    const line = page.locator('[data-testid="sel-inline-b"]');
    await line.waitFor();
    expect(await line.textContent()).toContain(t.name);
    const lb = (await line.boundingBox())!;
    expect(lb.y).toBeGreaterThanOrEqual(box.y + box.height - 1); // below the lanes, not over them
    expect(await page.locator('[data-testid="timeline-b"] .tooltip').isVisible()).toBe(false);
    await line.locator('button').tap();
    await line.waitFor({ state: 'detached' });
  });
});

describe('phone 390×844, touch: the tour', () => {
  it('says tap, not hover; names only controls on screen; no card covers what it points at', async () => {
    const { ctx, p } = await phone(false);
    const tour = p.locator('[data-testid="tour"]');
    await tour.waitFor();
    for (let k = 0; k < TOUR_STEPS.length; k++) {
      await p.waitForSelector(`[data-testid="tour"][data-step="${k}"][data-placed]`);
      expect(await p.textContent('#tour-text')).not.toMatch(/hover|click|wheel/i);
      expect(await namedControlsMissing(p)).toEqual([]);
      expect(await cardOverlapsTarget(p), `step ${k}`).toBeNull();
      await p.screenshot({ path: join(art, `touch_tour_${k}.png`) });
      await p.tap('[data-testid="tour-next"]');
    }
    await tour.waitFor({ state: 'detached' });
    expect(pageErrors).toEqual([]);
    await ctx.close();
  });
});

describe('phone 390×844, touch: a story beside the timeline', () => {
  const ids = STORIES.map((st) => st.id);
  it.each(ids)('%s: timeline A\'s first lane on the first screen; "more" shows the caption', async (id) => {
    const { ctx, p } = await phone(true);
    await p.goto(`${srv.url}?story=${id}`);
    await waitForApp(p);
    const caption = p.locator('[data-testid="story-caption"]');
    await caption.waitFor();
    await p.waitForFunction(() => {
      const text = document.querySelector('[data-testid="story-caption"]')?.textContent ?? '';
      return !text.includes('Simulating');
    });
    const canvas = (await p.locator('[data-testid="timeline-a"] canvas').boundingBox())!;
    const tops = (await probeOf(p, 'a')).laneCentresPx;
    const laneBottom = canvas.y + Number(tops[0]) + 8;
    expect(laneBottom, 'lane 1 of timeline A within the first screen').toBeLessThanOrEqual(VIEW.height);
    const clipped = () => caption.evaluate((e) => e.scrollHeight > e.clientHeight + 1);
    expect(await clipped(), 'the caption keeps to its first lines').toBe(true);
    await p.locator('[data-testid="story-more"]').tap();
    await expect.poll(clipped).toBe(false);
    const words = (await caption.textContent()) ?? '';
    expect(words).not.toMatch(/\bclick/i); // a mouse word on a phone
    if (id === 'overview') expect(words).toContain('Tap a green all-gather');
    expect(await p.locator('[data-testid="story-more"]').textContent()).toBe('less');
    await ctx.close();
  });
});
