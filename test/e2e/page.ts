// Page helpers for the e2e tests: read the store the app exposes (window.__FSDP_SIM__), what the
// timelines drew (their probes, src/ui/timeline/probe.ts), the canvases and the metrics table.

import type { BrowserContext, Page } from 'playwright-core';
import type { TimelineProbe } from '../../src/ui';

type Side = 'a' | 'b';

/** Pages of this context open past the first-visit tour (the tour has its own tests). */
export async function skipTour(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => localStorage.setItem('fsdp-sim:tour-done', '1'));
}

/** Both timelines have drawn a frame: the first simulation is in. */
export async function waitForApp(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const t = window.__FSDP_SIM__?.timelines;
      return t?.a !== undefined && t.b !== undefined;
    },
    undefined,
    { timeout: 30_000 },
  );
}

/** What the side's timeline drew in its last frame. */
export async function probeOf(page: Page, side: Side): Promise<TimelineProbe> {
  const probe = await page.evaluate((s) => window.__FSDP_SIM__?.timelines[s] ?? null, side);
  if (!probe) throw new Error(`timeline ${side} has drawn no frame`);
  return probe;
}

export async function laneCount(page: Page, side: Side): Promise<number> {
  return (await probeOf(page, side)).lanes;
}

/**
 * The lanes the side should draw: one per rank × stream, or, when its alike ranks are folded (the
 * probe says so), one per stream of the first rank, each standing for every rank.
 */
export async function expectedLanes(page: Page, side: Side): Promise<number> {
  const probe = await probeOf(page, side);
  const rs = await rankStreams(page, side);
  if (!probe.folded) return rs.pairs;
  if (!probe.laneRanks.every((r) => r.length >= rs.ranks)) throw new Error('folded lanes must stand for every rank');
  return rs.streams;
}

/** Distinct rank × stream pairs in the side's events (what the lanes should be). */
export async function rankStreams(page: Page, side: Side): Promise<{ ranks: number; streams: number; pairs: number }> {
  return page.evaluate((s) => {
    const r = window.__FSDP_SIM__!.store.getState().sides[s];
    const ev = r?.events ?? [];
    return {
      ranks: new Set(ev.map((e) => e.rank)).size,
      streams: new Set(ev.map((e) => e.stream)).size,
      pairs: new Set(ev.map((e) => `${e.rank}|${e.stream}`)).size,
    };
  }, side);
}

export async function metric(page: Page, key: string, side: Side): Promise<number> {
  return Number(
    await page.getAttribute(`[data-testid="metrics"] tr[data-metric="${key}"] td[data-side="${side}"]`, 'data-value'),
  );
}

export async function windowOf(page: Page, side: Side): Promise<[number, number]> {
  // to 1 ns: the resolution at which a link carries the window, so two pages that share a link compare equal
  const [a, b] = (await probeOf(page, side)).window.map((us) => Math.round(us * 1000) / 1000);
  return [a, b];
}

/** A cheap fingerprint of the canvas pixels (changes when the drawing changes) and how many are inked. */
export async function canvasInk(page: Page, side: Side): Promise<{ inked: number; hash: number }> {
  return page.evaluate((s) => {
    const c = document.querySelector<HTMLCanvasElement>(`[data-testid="timeline-${s}"] canvas`)!;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let inked = 0;
    let hash = 2166136261;
    for (let i = 0; i < d.length; i += 16) {
      if (d[i + 3] > 0) inked++;
      hash = Math.imul(hash ^ (d[i] + 3 * d[i + 1] + 7 * d[i + 2] + 11 * d[i + 3]), 16777619) >>> 0;
    }
    return { inked, hash };
  }, side);
}

export async function storeConfig(page: Page): Promise<unknown> {
  return page.evaluate(() => JSON.parse(JSON.stringify(window.__FSDP_SIM__!.store.getState().config)));
}

/** Type a value into a config text field and commit it with Enter. */
export async function setField(page: Page, path: string, value: string): Promise<void> {
  const sel = `[data-testid="cfg-${path.replace(/\./g, '-')}"]`;
  await page.fill(sel, value);
  await page.press(sel, 'Enter');
}

export async function nextFrames(page: Page, n = 2): Promise<void> {
  await page.evaluate(
    (k) =>
      new Promise<void>((ok) => {
        let i = 0;
        const f = () => (++i >= k ? ok() : requestAnimationFrame(f));
        requestAnimationFrame(f);
      }),
    n,
  );
}
