// The first screen on a projector (1280×720) and a laptop (1440×900), for every story: the
// headline, the legend and the first lane of both timelines inside the viewport on first load.
// Red means exposed communication exactly (the straggler story: the red each rank's lanes draw,
// from the timeline probe, against that rank's metrics); alike ranks drawn once and expanded by a
// click; the presentation view's next-story control and its outlined subject.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { STORIES } from '../../src/ui/stories';
import { GUTTER_PX } from '../../src/ui/timeline/draw';
import { artifactsDir, launchBrowser, startPreview } from './harness';
import { nextFrames, probeOf, skipTour } from './page';

const SIM_TIMEOUT = 120_000;
const SIZES = [
  { width: 1280, height: 720 },
  { width: 1440, height: 900 },
] as const;

let srv: { url: string; close: () => Promise<void> };
let browser: Browser;
let art: string;

beforeAll(async () => {
  srv = await startPreview();
  browser = await launchBrowser();
  art = await artifactsDir();
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function open(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  await skipTour(context);
  return { context, page: await context.newPage() };
}

/** Load `?story=<id>` (plus `extra`) and wait until its view is applied and both timelines drew it. */
async function loadStory(page: Page, id: string, extra = ''): Promise<void> {
  await page.goto(`${srv.url}?story=${id}${extra}`);
  await page.waitForFunction(
    (id) => {
      const s = window.__FSDP_SIM__?.store.getState();
      const t = window.__FSDP_SIM__?.timelines;
      if (!s || !t?.a || !t.b || s.simulating || s.story !== id || s.sides.a?.source !== 'sim') return false;
      const head = document.querySelector<HTMLElement>('[data-testid="headline"]');
      if (!head || head.dataset.kind === 'pending') return false;
      // drawn at the story's window (its zoom, or its subject in the presentation view)
      return (
        t.a.window[1] === s.window.endUs && t.b.window[1] === s.window.endUs && s.window.endUs < s.limitUs * 1.0001
      );
    },
    id,
    { timeout: SIM_TIMEOUT },
  );
  await nextFrames(page, 3); // the first-screen fit runs on layout
}

/** Rectangles of what must be on the first screen, in viewport px. */
async function firstScreen(page: Page) {
  const probes = { a: await probeOf(page, 'a'), b: await probeOf(page, 'b') };
  const rects = await page.evaluate(() => {
    const r = (sel: string) => {
      const b = document.querySelector(sel)?.getBoundingClientRect();
      return b ? { top: b.top, bottom: b.bottom, left: b.left, right: b.right } : null;
    };
    return {
      headline: r('[data-testid="headline"]'),
      legend: r('[data-testid="legend"]'),
      canvasA: r('[data-testid="timeline-a"] canvas'),
      canvasB: r('[data-testid="timeline-b"] canvas'),
      lanesA: r('[data-testid="timeline-a"] .lanes-scroll'),
      lanesB: r('[data-testid="timeline-b"] .lanes-scroll'),
      scrollY: window.scrollY,
    };
  });
  return { probes, rects };
}

describe.each(SIZES)('first screen at $width×$height', (size) => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => ({ context, page } = await open(size)));
  afterAll(async () => context?.close());

  it.each(STORIES.map((s) => s.id))(
    "%s: headline, legend and both timelines' first lane in view",
    async (id) => {
      await loadStory(page, id);
      const { probes, rects } = await firstScreen(page);
      expect(rects.scrollY).toBe(0);
      const inView = (r: { top: number; bottom: number } | null, what: string) => {
        expect(r, what).not.toBeNull();
        expect(r!.top, `${what} top`).toBeGreaterThanOrEqual(0);
        expect(r!.bottom, `${what} bottom`).toBeLessThanOrEqual(size.height);
      };
      inView(rects.headline, 'headline');
      inView(rects.legend, 'legend');
      for (const side of ['a', 'b'] as const) {
        const canvas = side === 'a' ? rects.canvasA! : rects.canvasB!;
        const lanes = side === 'a' ? rects.lanesA! : rects.lanesB!;
        const centre = canvas.top + probes[side].laneCentresPx[0];
        const lane = { top: centre - 7, bottom: centre + 7 }; // the first lane, at least 14 px tall
        inView(lane, `timeline ${side}'s first lane`);
        expect(lane.top).toBeGreaterThanOrEqual(lanes.top - 1); // not scrolled out of its own box
        expect(lane.bottom).toBeLessThanOrEqual(lanes.bottom + 1);
      }
      await page.screenshot({ path: `${art}/first_screen_${id}_${size.width}x${size.height}.png` });
    },
    SIM_TIMEOUT,
  );
});

describe('what the timelines draw', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => ({ context, page } = await open(SIZES[1])));
  afterAll(async () => context?.close());

  it(
    'straggler: the red each rank draws is its exposed communication; the rest of a wait is a late peer',
    async () => {
      await loadStory(page, 'straggler');
      const per = await page.evaluate(() => {
        const s = window.__FSDP_SIM__!.store.getState();
        const r = s.sides.b!;
        const waitUs = (rank: number) =>
          r.events.filter((e) => e.rank === rank && e.kind === 'wait').reduce((t, e) => t + e.dur, 0);
        return r.metrics.perRank.map((m) => ({
          rank: m.rank,
          exposed: m.exposedCommUs,
          idle: m.idleUs,
          wait: waitUs(m.rank),
        }));
      });
      const probe = await probeOf(page, 'b');
      expect(probe.folded).toBe(false); // a straggler: ranks differ, each drawn
      expect(probe.alike).toBe(false);
      const straggler = 2;
      for (const m of per) {
        const lanes = probe.laneRanks
          .map((rs, li) => (rs.length === 1 && rs[0] === m.rank ? li : -1))
          .filter((li) => li >= 0);
        const comm = lanes.find((li) => probe.laneStreams[li].startsWith('comm'))!;
        const compute = lanes.find((li) => probe.laneStreams[li] === 'compute')!;
        expect(probe.redUs[comm]).toBeCloseTo(m.exposed, 2); // the band: exactly the metric
        expect(probe.redUs[compute]).toBeCloseTo(m.exposed, 2); // the waits' red: the same time
        expect(probe.redUs[compute] + probe.peerWaitUs[compute]).toBeCloseTo(m.wait, 2);
        if (m.rank !== straggler) {
          expect(probe.peerWaitUs[compute]).toBeGreaterThan(5 * m.exposed); // mostly waiting for rank 2
          expect(probe.peerWaitUs[compute]).toBeLessThanOrEqual(m.idle + 0.01); // which the metrics call idle
        }
      }
      const legend = await page.textContent('[data-testid="legend"]');
      expect(legend).toContain('wait for a late peer');
      // the hover card of rank 0's longest wait in view says how it splits
      const [w0, w1] = probe.window;
      const t = await page.evaluate(
        ([w0, w1]) => {
          const ev = window.__FSDP_SIM__!.store.getState().sides.b!.events;
          const mid = (e: { start: number; dur: number }) => e.start + e.dur / 2;
          const waits = ev.filter((e) => e.rank === 0 && e.kind === 'wait' && mid(e) > w0 && mid(e) < w1);
          return mid(waits.sort((x, y) => y.dur - x.dur)[0]);
        },
        [w0, w1],
      );
      const canvas = (await page.locator('[data-testid="timeline-b"] canvas').boundingBox())!;
      const x = GUTTER_PX + ((t - w0) / (w1 - w0)) * (canvas.width - GUTTER_PX - 8);
      await page.mouse.move(canvas.x + x, canvas.y + probe.laneCentresPx[0]);
      const tip = page.locator('[data-testid="timeline-b"] .tooltip');
      await tip.waitFor();
      expect(await tip.textContent()).toMatch(/exposed communication \(red\) · .* waiting for a late peer/);
    },
    SIM_TIMEOUT,
  );

  it(
    'draws alike ranks once, standing for all; a click expands them and folds them again',
    async () => {
      await loadStory(page, 'overview');
      const folded = await probeOf(page, 'a');
      expect(folded.folded).toBe(true);
      expect(folded.lanes).toBe(2);
      expect(folded.laneRanks[0]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(await page.textContent('[data-testid="fold-a"]')).toContain('r0–r7 · all ranks alike');
      await page.click('[data-testid="fold-a"]');
      await page.waitForFunction(() => window.__FSDP_SIM__!.timelines.a?.lanes === 16);
      const open = await probeOf(page, 'a');
      expect(open.folded).toBe(false);
      expect(open.laneRanks.map((r) => r.join())).toEqual([0, 1, 2, 3, 4, 5, 6, 7].flatMap((r) => [`${r}`, `${r}`]));
      expect((await probeOf(page, 'b')).lanes).toBe(2); // each timeline folds on its own
      await page.click('[data-testid="fold-a"]');
      await page.waitForFunction(() => window.__FSDP_SIM__!.timelines.a?.lanes === 2);
    },
    SIM_TIMEOUT,
  );

  it(
    "hang at 1280×720: A's lanes scroll in their box; the keyboard cursor keeps its lane in view",
    async () => {
      const { context: c2, page: p } = await open(SIZES[0]);
      try {
        await loadStory(p, 'hang');
        const a = await probeOf(p, 'a');
        expect(a.folded).toBe(false); // ranks disagree: each drawn
        const last = a.lanes - 1;
        await p.focus('[data-testid="timeline-a"] canvas');
        for (let k = 0; k <= last; k++) await p.keyboard.press('ArrowDown');
        await p.waitForFunction((l) => window.__FSDP_SIM__!.timelines.a?.keyLane === l, last);
        const seen = await p.evaluate((l) => {
          const box = document.querySelector('[data-testid="timeline-a"] .lanes-scroll')!.getBoundingClientRect();
          const canvas = document.querySelector('[data-testid="timeline-a"] canvas')!.getBoundingClientRect();
          const y = canvas.top + window.__FSDP_SIM__!.timelines.a!.laneCentresPx[l];
          return { y, top: box.top, bottom: box.bottom };
        }, last);
        expect(seen.y).toBeGreaterThan(seen.top);
        expect(seen.y).toBeLessThan(seen.bottom);
      } finally {
        await c2.close();
      }
    },
    SIM_TIMEOUT,
  );

  it(
    "the presentation view: a next-story control and the story's subject outlined at a readable width",
    async () => {
      const { context: c2, page: p } = await open(SIZES[0]);
      try {
        await loadStory(p, 'overview', '&present=1');
        const next = await p.waitForSelector('[data-testid="next-story"]');
        const box = (await next.boundingBox())!;
        expect(box.y + box.height).toBeLessThanOrEqual(SIZES[0].height);
        expect(await next.textContent()).toContain(STORIES[1].title);
        expect(await p.isVisible('[data-testid="cfg-ranks"]')).toBe(false); // config tucked away
        const probe = await probeOf(p, 'b');
        expect(probe.selected).toBeGreaterThanOrEqual(0);
        expect(probe.subject).not.toBeNull();
        expect(probe.subject!.w).toBeGreaterThanOrEqual(150); // not a 10 px block
        expect(probe.subject!.x).toBeGreaterThan(130); // nor at the left edge (lanes start at 118 px)
        const canvas = (await p.locator('[data-testid="timeline-b"] canvas').boundingBox())!;
        expect(canvas.y + probe.subject!.y + probe.subject!.h).toBeLessThanOrEqual(SIZES[0].height);
        await p.screenshot({ path: `${art}/first_screen_present_1280x720.png` });
        await next.click();
        await p.waitForFunction((id) => window.__FSDP_SIM__!.store.getState().story === id, STORIES[1].id);
        await p.waitForFunction((id) => {
          const q = new URLSearchParams(location.search);
          return q.get('story') === id && q.get('present') === '1'; // still presenting, in the link too
        }, STORIES[1].id);
      } finally {
        await c2.close();
      }
    },
    SIM_TIMEOUT,
  );
});
