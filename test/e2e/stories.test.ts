// Stories in headless Chromium: each story picked from the menu (on top of whatever the previous
// one left) reaches the same state as its link — config, zoom, headline, caption, URL state,
// selection — and the URL it then holds restores that state exactly; the hang story headlines
// the hang with no step delta, naming the ranks the data names.

import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseConfigQuery } from '../../src/config';
import { STORIES } from '../../src/ui/stories';
import { appForFile } from './harness';

const app = appForFile({ width: 1440, height: 900 });
const SIM_TIMEOUT = 90_000;

interface StoryState {
  readonly url: Record<string, string>;
  readonly headline: string;
  readonly caption: string;
  readonly selection: string | null;
  readonly config: string;
  readonly menu: string; // the story menu's value
}

/** Wait until the story's view is applied and written to the URL, then read what the screen shows. */
async function settled(page: Page, id: string): Promise<StoryState> {
  const story = STORIES.find((s) => s.id === id)!;
  await page.waitForFunction(
    ({ id, zoom, selects }) => {
      const s = window.__FSDP_SIM__!.store.getState();
      if (s.simulating || s.story !== id || s.sides.a?.source !== 'sim') return false;
      const want = [zoom[0] * s.limitUs, zoom[1] * s.limitUs];
      if (Math.abs(s.window.startUs - want[0]) > 1e-3 || Math.abs(s.window.endUs - want[1]) > 1e-3) return false;
      if (selects !== (s.selection !== null)) return false;
      const q = new URLSearchParams(location.search);
      if (q.get('story') !== id || q.has('view') !== zoom[1] < 1 || q.has('sel') !== selects) return false;
      // the URL flushed after the view landed (it is written 150 ms after each change)
      const view = `${+s.window.startUs.toFixed(3)},${+s.window.endUs.toFixed(3)}`;
      const sel = s.selection ? `${s.selection.side}${s.selection.eventIndex}` : null;
      if ((zoom[1] < 1 && q.get('view') !== view) || (selects && q.get('sel') !== sel)) return false;
      // and the config keys flushed: none for the first screen (llama3-8b × 8), else the model and
      // what differs from the codec's tiny × 4
      const ranks = Number(q.get('ranks') ?? (q.has('model') ? 4 : 8));
      if ((q.get('model') ?? 'llama3-8b') !== s.config.model || ranks !== s.config.ranks) return false;
      // and drawn: the headline and caption rendered from these sides
      const head = document.querySelector<HTMLElement>('[data-testid="headline"]');
      const cap = document.querySelector<HTMLElement>('[data-testid="story-caption"]');
      const drawn = !!head && head.dataset.kind !== 'pending';
      return drawn && cap?.dataset.story === id && !cap.textContent?.includes('Simulating…');
    },
    { id, zoom: story.zoom, selects: !!story.select },
    { timeout: SIM_TIMEOUT },
  );
  return page.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState();
    const sel = s.selection;
    return {
      url: Object.fromEntries(new URLSearchParams(location.search)),
      headline: document.querySelector('[data-testid="headline"]')?.textContent ?? '',
      caption: document.querySelector('[data-testid="story-caption"]')?.textContent ?? '',
      selection: sel ? `${sel.side}${sel.eventIndex}` : null,
      config: JSON.stringify(s.config),
      menu: document.querySelector<HTMLSelectElement>('[data-testid="story-menu"]')?.value ?? '',
    };
  });
}

async function fromLink(page: Page, id: string): Promise<StoryState> {
  await page.goto(`${new URL(page.url()).origin}/?story=${id}`);
  return settled(page, id);
}

/** The whole URL a story left (config, view, selection): what a shared link carries. */
async function fromSharedUrl(page: Page, id: string, href: string): Promise<StoryState> {
  await page.goto(href);
  return settled(page, id);
}

async function fromMenu(page: Page, id: string): Promise<StoryState> {
  await page.selectOption('[data-testid="story-menu"]', id);
  return settled(page, id);
}

describe('stories', () => {
  it('each story from the menu equals its link and its shared URL, whatever the previous story left', async () => {
    // the first screen is overview's config: from the menu it must still zoom and select
    const idle = () => !window.__FSDP_SIM__!.store.getState().simulating;
    await app.page.waitForFunction(idle, null, { timeout: SIM_TIMEOUT });
    for (const s of STORIES) {
      const menu = await fromMenu(app.page, s.id);
      const link = await fromLink(app.page, s.id);
      expect(menu, s.id).toEqual(link);
      expect(JSON.parse(link.config), s.id).toEqual(JSON.parse(JSON.stringify(parseConfigQuery(s.query).config)));
      expect(link.menu, s.id).toBe(s.id);
      expect(link.selection?.[0] ?? null, s.id).toBe(s.select?.side ?? null);
      expect(link.caption).not.toMatch(/Simulating…/);
      // the URL now holds the whole state: loading it restores that state exactly
      expect(await fromSharedUrl(app.page, s.id, app.page.url()), s.id).toEqual(link);
      // a story without a selection selects nothing, even after one that did
      if (!s.select) expect(link.selection, s.id).toBeNull();
    }
    expect(app.pageErrors).toEqual([]);
  }, 900_000);

  it(
    "the hang story headlines the hang, names the data's ranks and gives no step delta",
    async () => {
      await fromLink(app.page, 'hang');
      const m = await app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.mismatch);
      expect(m).toBeDefined();
      const headline = (await app.page.textContent('[data-testid="headline"]'))!;
      const named = `B hangs at collective #${m!.seq}: ranks ${m!.ranks[0]} and ${m!.ranks[1]} issued different`;
      expect(headline).toContain(named);
      expect(headline).not.toMatch(/step [−+]|exposed communication [−+]|→/);
      expect(await app.page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('hang');
      const caption = (await app.page.textContent('[data-testid="story-caption"]'))!;
      expect(caption).toContain(`ranks ${m!.ranks[0]} and ${m!.ranks[1]}`);
      const banner = (await app.page.textContent('[data-testid="banner-mismatch"]'))!;
      expect(banner).toContain(`rank ${m!.ranks[0]} issued`);
      expect(banner).toContain(`rank ${m!.ranks[1]} issued`);
      expect(banner).not.toMatch(/\d+B\b/); // sizes in binary units, not raw bytes
      // one sentence, one flex item: no colon cut off from the bold title as an item of its own
      expect(banner).toMatch(/^\s*Collective mismatch on B: at collective #/);
      const items = await app.page.locator('[data-testid="banner-mismatch"]').evaluate((e) => e.childNodes.length);
      expect(items).toBe(1);
      // no B-vs-A figure in Metrics either
      const deltas = await app.page.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
      expect(deltas.every((d) => d === '–')).toBe(true);
    },
    SIM_TIMEOUT,
  );
});
