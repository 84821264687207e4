// Teaching the app end to end in headless Chromium: the first-visit tour, the glossary and
// hover definitions, plain-language reasons and knob help, the headline, a story picked from the
// menu and Back undoing it, Back undoing a change, flow arrows, keyboard-driven timelines and the
// automated accessibility check (axe-core: no serious or critical violations).

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FIRST_SCREEN_CONFIG } from '../../src/config';
import { REASON_PLAIN, TERMS } from '../../src/ui/glossary';
import { TOUR_STEPS } from '../../src/ui/panels/tour';
import { artifactsDir, launchBrowser, startPreview } from './harness';
import { metric, nextFrames, probeOf, setField, storeConfig, waitForApp, windowOf, skipTour } from './page';
import { fixturePath } from '../helpers/fixtures';

let browser: Browser;
let previewSrv: { url: string; close: () => Promise<void> };
let art: string;
const pageErrors: string[] = [];

async function freshPage(tourDone: boolean): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  if (tourDone) await skipTour(context);
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  return { context, page };
}

/** No simulation running (the last config's results are in). */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
}

/** Settled, and the coalesced URL write has landed: the URL holds every part. */
async function urlHas(page: Page, ...parts: string[]): Promise<void> {
  await settled(page);
  await expect.poll(() => page.url()).toSatisfy((u: string) => parts.every((x) => u.includes(x)));
}

beforeAll(async () => {
  art = await artifactsDir();
  previewSrv = await startPreview();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await previewSrv?.close();
});

describe('first visit', () => {
  it('shows the tour on the first visit, not on the second, and reopens it from Help', async () => {
    const { context, page } = await freshPage(false);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`); // small: six steps on a loaded machine
    await waitForApp(page);
    const tour = page.locator('[data-testid="tour"]');
    await tour.waitFor();
    const titles: string[] = [];
    for (let k = 0; k < TOUR_STEPS.length; k++) {
      expect(await tour.getAttribute('data-step')).toBe(String(k));
      titles.push((await page.textContent('#tour-title')) ?? '');
      // the step outlines what it talks about
      expect(await page.locator('.tour-target').count()).toBe(1);
      await page.click('[data-testid="tour-next"]');
    }
    expect(titles).toEqual([...new Set(titles)]); // every step a different one
    await tour.waitFor({ state: 'detached' });
    expect(await page.locator('.tour-target').count()).toBe(0);
    await page.reload();
    await waitForApp(page);
    await nextFrames(page, 3); // the tour would open in the effect after the first draw
    expect(await tour.count()).toBe(0); // second visit: no tour
    await page.click('[data-testid="help-tour"]');
    await tour.waitFor();
    expect(await tour.getAttribute('data-step')).toBe('0');
    await page.keyboard.press('Escape'); // skippable
    await tour.waitFor({ state: 'detached' });
    await context.close();
  }, 120_000);

  it('states the result in one headline sentence, from the metrics', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    const text = (await page.textContent('[data-testid="headline"]')) ?? '';
    const agA = await metric(page, 'ag', 'a');
    const agB = await metric(page, 'ag', 'b');
    const stepA = await metric(page, 'step', 'a');
    const stepB = await metric(page, 'step', 'b');
    expect(text).toMatch(/^autobucketing vs aot_eager: step /);
    expect(text).toContain(`${agA} → ${agB} all-gathers`);
    const pct = ((stepB - stepA) / stepA) * 100;
    expect(text).toContain(`step ${pct < 0 ? '−' : '+'}${Math.abs(pct).toFixed(1)} %`);
    expect(text).toMatch(/exposed communication [−+][\d.]+ %/);
    expect(text).toMatch(/peak live tensors [−+][\d.]+ %/);
    await context.close();
  });
});

describe('plain words', () => {
  it("the glossary defines every term, with the diagram of one parameter's life", async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`);
    await waitForApp(page);
    await page.click('[data-testid="help-glossary"]');
    const g = page.locator('[data-testid="glossary"]');
    await g.waitFor();
    const ids = await g
      .locator('[data-term-def]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-term-def')));
    expect(ids).toEqual(TERMS.map((t) => t.id));
    for (const word of [
      'FSDP',
      'shard',
      'all-gather',
      'reduce-scatter',
      'wait',
      'exposed communication',
      'overlap',
      'prefetch',
      'bucket',
    ]) {
      expect(await g.locator('dt', { hasText: new RegExp(`^${word}$`) }).count()).toBe(1);
    }
    const boxes = await page.locator('[data-testid="life-diagram"] text.life-label').allTextContents();
    expect(boxes).toEqual(['shard', 'all-gather', 'compute', 'free', 'reduce-scatter']);
    await g.screenshot({ path: join(art, 'teach_glossary.png') });
    await page.click('[data-testid="glossary-close"]');
    await g.waitFor({ state: 'detached' });
    await context.close();
  });

  it('legend items, metric rows and knobs define themselves on hover and on keyboard focus', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`);
    await waitForApp(page);
    const ag = TERMS.find((t) => t.id === 'all_gather')!;
    const legendAg = page.locator('[data-testid="legend"] [data-term="all_gather"]');
    expect(await legendAg.getAttribute('data-def')).toBe(`${ag.term}: ${ag.text}`);
    const card = page.locator('[data-testid="term-card"]');
    await legendAg.hover();
    expect(await card.textContent()).toBe(`${ag.term}: ${ag.text}`);
    await page.mouse.move(0, 0);
    await card.waitFor({ state: 'detached' });
    const exposed = TERMS.find((t) => t.id === 'exposed')!;
    const exposedName = page.locator('[data-testid="metrics"] tr[data-metric="exposed"] .term');
    expect(await exposedName.getAttribute('data-def')).toContain(exposed.text);
    await exposedName.focus(); // keyboard focus opens it too
    expect(await card.textContent()).toContain(exposed.text);
    await page.keyboard.press('Escape');
    await card.waitFor({ state: 'detached' });
    for (const key of ['step', 'overlap', 'peak', 'ag', 'rs']) {
      expect(
        (await page.getAttribute(`[data-testid="metrics"] tr[data-metric="${key}"] .term`, 'data-def'))!.length,
      ).toBeGreaterThan(30);
    }
    // a focused knob shows its help under it
    await page.focus('[data-testid="cfg-autobucketing-max_in_flight_gb"]');
    expect(await page.textContent('[data-testid="cfg-autobucketing-max_in_flight_gb-help"]')).toMatch(/in flight/);
    // every knob's tooltip says what it does; the autobucketing ones name torch's argument and the cost
    const knob = await page.locator('[data-field="autobucketing.max_in_flight_gb"] label').getAttribute('title');
    expect(knob).toMatch(/in flight/);
    expect(knob).toMatch(/Cost: raising it/);
    expect(knob).toContain('schedule_overlap_bucketing(max_in_flight_gb=');
    expect(knob).toContain('[0, 1024]'); // the allowed range is still there
    const titles = await page
      .locator('.config .field label')
      .evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? ''));
    for (const t of titles) expect(t.split('\n').length).toBeGreaterThan(1); // a description, not only the range
    await context.close();
  });

  it('reasons read in plain language first, the code name second', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`);
    await waitForApp(page);
    const items = page.locator('[data-testid="explain-reasons"] li');
    await items.first().waitFor();
    const n = await items.count();
    expect(n).toBeGreaterThan(0);
    for (let i = 0; i < n; i++) {
      const code = (await items.nth(i).getAttribute('data-code'))!;
      const text = (await items.nth(i).textContent())!;
      expect(text.startsWith(REASON_PLAIN[code as keyof typeof REASON_PLAIN])).toBe(true);
      expect(text.trimEnd().endsWith(code)).toBe(true);
    }
    await context.close();
  });
});

/** Select the first all-gather of B on rank 0 through the store and read the flow arrows drawn. */
async function selectFirstAllGather(page: Page): Promise<number> {
  await page.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState();
    const i = s.sides.b!.events.findIndex((e) => e.rank === 0 && e.kind === 'all_gather');
    const e = s.sides.b!.events[i];
    s.setWindow({ startUs: e.start - 20, endUs: e.start + 200 });
    s.select({ side: 'b', eventIndex: i });
  });
  await nextFrames(page, 3);
  return (await probeOf(page, 'b')).flowArrows;
}

describe('timelines', () => {
  it('draws flow arrows from a selected all-gather to its wait and the compute that uses it', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`); // an all-gather, its wait and its use within 220 µs
    await waitForApp(page);
    expect((await probeOf(page, 'b')).flowArrows).toBe(0);
    expect(await selectFirstAllGather(page)).toBe(2); // start → wait, wait → use
    await page.locator('[data-testid="timeline-b"]').screenshot({ path: join(art, 'teach_flow_arrows.png') });
    await page.keyboard.press('Escape');
    await nextFrames(page, 3);
    expect((await probeOf(page, 'b')).flowArrows).toBe(0);
    await context.close();
  });

  it('a focused timeline pans with arrows, zooms with +/- and selects with Enter', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`);
    await waitForApp(page);
    // Tab reaches the canvases: keep tabbing until timeline A's canvas has focus, at most once per
    // focusable element (the knob panel grows with every knob)
    const stops = await page.evaluate(
      () => document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]').length,
    );
    let reached = false;
    for (let k = 0; k <= stops && !reached; k++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(
        () => document.activeElement === document.querySelector('[data-testid="timeline-a"] canvas'),
      );
    }
    expect(reached).toBe(true);
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe('none'); // visible focus
    const w0 = await windowOf(page, 'a');
    await page.keyboard.press('+');
    await nextFrames(page, 2);
    const w1 = await windowOf(page, 'a');
    expect(w1[1] - w1[0]).toBeLessThan(w0[1] - w0[0]);
    await page.keyboard.press('ArrowRight');
    await nextFrames(page, 2);
    const w2 = await windowOf(page, 'a');
    expect(w2[0]).toBeGreaterThan(w1[0]);
    expect(await windowOf(page, 'b')).toEqual(w2); // still synchronized
    await page.keyboard.press('-');
    await nextFrames(page, 2);
    expect((await windowOf(page, 'a'))[1] - (await windowOf(page, 'a'))[0]).toBeGreaterThan(w2[1] - w2[0]);
    await page.keyboard.press('ArrowDown'); // lane 1: r0's comm stream
    await page.keyboard.press('Enter');
    const sel = await page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      return s.selection ? { side: s.selection.side, e: s.sides.a!.events[s.selection.eventIndex] } : null;
    });
    expect(sel?.side).toBe('a');
    expect(sel?.e.rank).toBe(0);
    expect(sel?.e.stream).not.toBe('compute');
    await page.waitForSelector('[data-testid="details"] dl');
    await context.close();
  });
});

describe('learn one layer', () => {
  it("steps through one block's forward and backward under both backends", async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=4`); // a block of tiny: a few dozen ops to click through
    await waitForApp(page);
    await page.click('[data-testid="help-walk"]');
    const panel = page.locator('[data-testid="step-through"]');
    await panel.waitFor();
    const n = Number(await page.getAttribute('[data-testid="walk-slider"]', 'max')) + 1;
    expect(n).toBeGreaterThan(8);
    type Seen = { op: string; index: number; phase: string; inFlight: number; memory: number; leadWaits: number };
    const seen: Record<'a' | 'b', Seen[]> = { a: [], b: [] };
    const read = async (side: 'a' | 'b'): Promise<Seen> => {
      const el = page.locator(`[data-testid="walk-${side}"]`);
      return {
        op: (await el.getAttribute('data-op'))!,
        index: Number(await el.getAttribute('data-index')),
        phase: (await el.getAttribute('data-phase'))!,
        inFlight: Number(await el.getAttribute('data-in-flight')),
        memory: Number(await el.getAttribute('data-memory')),
        leadWaits: Number(await el.getAttribute('data-lead-waits')),
      };
    };
    for (let k = 0; k < n; k++) {
      for (const side of ['a', 'b'] as const) seen[side].push(await read(side));
      expect(seen.b[k].op, `step ${k}`).toBe(seen.a[k].op); // both sides on the same op of the step graph
      if (k < n - 1) await page.click('[data-testid="walk-next"]');
    }
    const idxA = seen.a.map((x) => x.index);
    expect(idxA[0]).toBe(0);
    for (let k = 1; k < idxA.length; k++) expect(idxA[k]).toBeGreaterThan(idxA[k - 1]); // in A's order
    for (const side of ['a', 'b'] as const) {
      const s = seen[side];
      expect(new Set(s.map((x) => x.index)).size).toBe(n); // each of the side's ops once
      expect(new Set(s.map((x) => x.op)).size).toBe(n);
      expect(s[0].phase).toBe('forward');
      expect(s.some((x) => x.phase === 'backward')).toBe(true);
      expect(s.findIndex((x) => x.phase === 'backward')).toBeGreaterThan(0);
      const mem = s.map((x) => x.memory);
      expect(mem.some((m, k) => k > 0 && m > mem[k - 1])).toBe(true); // memory rises …
      expect(mem.some((m, k) => k > 0 && m < mem[k - 1])).toBe(true); // … and falls
    }
    // A waits on each all-gather just before the op that reads it, B on a few buckets: fewer waits
    const waited = (side: 'a' | 'b') => seen[side].filter((x) => x.leadWaits > 0).length;
    expect(waited('b')).toBeGreaterThan(0);
    expect(waited('a')).toBeGreaterThan(waited('b'));
    // the timeline follows: B's current op is selected there
    const selected = await page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      return s.selection ? s.sides[s.selection.side]!.events[s.selection.eventIndex].name : null;
    });
    expect(selected).toBe(seen.b[seen.b.length - 1].op);
    await panel.screenshot({ path: join(art, 'teach_step_through.png') });
    // Play advances by itself
    await page.fill('[data-testid="walk-slider"]', '0');
    await page.click('[data-testid="walk-play"]');
    await expect
      .poll(async () => Number(await page.getAttribute('[data-testid="walk-b"]', 'data-index')), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    await page.click('[data-testid="walk-play"]');
    await context.close();
  });
});

describe('story presets', () => {
  // each story's link, menu entry and shared URL: stories.test.ts
  it('picking a story from the menu loads it; Back returns to the previous state', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    await settled(page);
    const before = await storeConfig(page);
    await page.selectOption('[data-testid="story-menu"]', 'straggler');
    await page.waitForSelector('[data-testid="story-caption"][data-story="straggler"]');
    await urlHas(page, 'story=straggler');
    expect(((await storeConfig(page)) as { straggler: { rank: number } }).straggler.rank).toBe(2);
    await page.goBack();
    await page.waitForSelector('[data-testid="story-caption"]', { state: 'detached' });
    await settled(page);
    await expect.poll(() => storeConfig(page)).toEqual(before);
    await context.close();
  });
});

describe('history', () => {
  it('Back undoes a config change and Forward redoes it', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=tiny&ranks=2`); // explicit: whatever the first screen is
    await waitForApp(page);
    await urlHas(page, 'ranks=2');
    await setField(page, 'ranks', '8');
    await urlHas(page, 'ranks=8');
    await page.selectOption('[data-testid="cfg-network"]', 'pcie-ethernet');
    await urlHas(page, 'network=pcie-ethernet');
    // zooming replaces the entry: Back skips it
    await page.evaluate(() => window.__FSDP_SIM__!.store.getState().zoomBy(0.5));
    await urlHas(page, 'view=');
    await page.goBack();
    await expect.poll(async () => ((await storeConfig(page)) as { network: string }).network).toBe('nvlink-ib');
    expect(((await storeConfig(page)) as { ranks: number }).ranks).toBe(8);
    await expect.poll(() => page.inputValue('[data-testid="cfg-network"]')).toBe('nvlink-ib');
    await page.goBack();
    await expect.poll(async () => ((await storeConfig(page)) as { ranks: number }).ranks).toBe(2);
    await expect.poll(() => page.inputValue('[data-testid="cfg-ranks"]')).toBe('2');
    await settled(page);
    await page.goForward();
    await expect.poll(async () => ((await storeConfig(page)) as { ranks: number }).ranks).toBe(8);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});

describe('minor fixes', () => {
  it('the PNG export carries a title with step time and clock, a time axis and a legend', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-png"]')]);
    const png = await readFile((await download.path())!);
    const info = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const dpr = window.devicePixelRatio || 1;
      const canvasH = document.querySelector<HTMLCanvasElement>('[data-testid="timeline-a"] canvas')!.height;
      const inked = (y0: number, y1: number) => {
        const d = ctx.getImageData(0, y0, c.width, y1 - y0).data;
        const [r, g, bl] = [d[0], d[1], d[2]]; // the band's first pixel is background
        let n = 0;
        for (let i = 0; i < d.length; i += 4)
          if (Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - bl) > 60) n++;
        return n;
      };
      return {
        height: img.height,
        expected: 2 * (canvasH + 36 * dpr) + 22 * dpr,
        titleInk: inked(0, 20 * dpr),
        axisInk: inked(20 * dpr, 36 * dpr),
        legendInk: inked(img.height - 22 * dpr, img.height),
      };
    }, png.toString('base64'));
    expect(info.height).toBe(info.expected);
    expect(info.titleInk).toBeGreaterThan(100);
    expect(info.axisInk).toBeGreaterThan(50);
    expect(info.legendInk).toBeGreaterThan(100);
    await context.close();
  });

  it('tick labels resolve a 1 µs window deep in the step', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    await page.evaluate(() => {
      const s = window.__FSDP_SIM__!.store.getState();
      const t = s.limitUs * 0.7;
      s.setWindow({ startUs: t, endUs: t + 1 });
    });
    await nextFrames(page, 3);
    const labels = await page.locator('[data-testid="timeline-a"] svg.axis .tick text').allTextContents();
    expect(labels.length).toBeGreaterThan(2);
    expect(new Set(labels).size).toBe(labels.length);
    await context.close();
  });

  it('the "does not fit in HBM" advice offers only levers the config has not pulled', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?model=llama3-70b&ranks=64`); // torchtitan's 70b config: full AC already
    await waitForApp(page);
    const text = (await page.textContent('[data-testid="metrics-hbm-warning"]'))!;
    expect(text).toMatch(/Does not fit in HBM/);
    expect(text).not.toMatch(/activation checkpointing/i);
    await context.close();
  });

  it("the lane note says which ranks are shown and why the rest are hidden; no model: the bare link's", async () => {
    const { context, page } = await freshPage(true);
    await page.goto(`${previewSrv.url}?ranks=16`);
    await waitForApp(page);
    await page.click('[data-testid="fold-a"]'); // 16 alike ranks are drawn once until expanded
    const note = (await page.textContent('[data-testid="lane-note-a"]'))!;
    expect(note).toMatch(/showing 8 of 16 ranks \(r0–r7\); 8 more hidden/);
    // a link without a model opens the bare link's model, not silently the codec's tiny
    expect(await page.inputValue('[data-testid="cfg-model"]')).toBe(FIRST_SCREEN_CONFIG.model);
    await context.close();
  });
});

describe('minor fixes: feedback', () => {
  it('a long simulation dims the old timelines and says so until the new ones land', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    await page.selectOption('[data-testid="cfg-model"]', 'llama3-405b'); // long enough to see (~0.2–1 s)
    await page.waitForSelector('[data-testid="stale-a"]', { timeout: 5_000 });
    expect(await page.getAttribute('[data-testid="timeline-a"]', 'aria-busy')).toBe('true');
    await page.waitForSelector('[data-testid="stale-a"]', { state: 'detached', timeout: 60_000 });
    expect(await page.getAttribute('[data-testid="timeline-a"]', 'aria-busy')).toBe('false');
    await context.close();
  });

  it('the import notice does not cover "Back to simulation"', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    await page.setInputFiles('[data-testid="import-trace"]', [fixturePath('kineto/rank0.pt.trace.json')]);
    const notice = await page.waitForSelector('[data-testid="notice-info"]');
    await page.locator('[data-testid="resimulate"]').scrollIntoViewIfNeeded();
    const n = (await notice.boundingBox())!;
    const b = (await page.locator('[data-testid="resimulate"]').boundingBox())!;
    const overlap = !(n.x + n.width <= b.x || b.x + b.width <= n.x || n.y + n.height <= b.y || b.y + b.height <= n.y);
    expect(overlap).toBe(false);
    await page.click('[data-testid="resimulate"]', { trial: true }); // clickable: nothing on top of it
    await context.close();
  });
});

describe('accessibility', () => {
  it('axe-core finds no serious or critical violations (light and dark, glossary open)', async () => {
    const { context, page } = await freshPage(true);
    await page.goto(previewSrv.url);
    await waitForApp(page);
    await page.click('[data-testid="help-glossary"]');
    await page.locator('[data-testid="glossary"]').waitFor();
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.addScriptTag({ content: axeSource });
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => window.__FSDP_SIM__!.store.getState().setTheme(t), theme);
      await nextFrames(page, 2);
      const violations = await page.evaluate(async () => {
        const axe = (
          window as unknown as {
            axe: {
              run: (
                ctx: Document,
                o: object,
              ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
            };
          }
        ).axe;
        const r = await axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
        }));
      });
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad, `${theme}: ${JSON.stringify(bad)}`).toEqual([]);
    }
    // every form control has an accessible name
    const unnamed = await page.evaluate(
      () =>
        [...document.querySelectorAll('input, select, button')].filter((el) => {
          const h = el as HTMLElement;
          return !(
            h.getAttribute('aria-label') ||
            h.closest('label') ||
            (h.textContent ?? '').trim() ||
            h.getAttribute('title')
          );
        }).length,
    );
    expect(unnamed).toBe(0);
    await context.close();
  });
});
