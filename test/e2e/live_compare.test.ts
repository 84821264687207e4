// Only like runs compared, in headless Chromium: Run live on a llama3-70b config switches both
// sides (and the config panel) to the tiny model the workers train and never headlines a delta
// between models; after Run live A+B on CPU kernels, a B run on WebGPU kernels is not compared
// with A; a stopped run says where it stopped and is not compared.

import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { appForFile } from './harness';
import { setField } from './page';

const app = appForFile({ width: 1440, height: 900 });
const LIVE_TIMEOUT = 240_000;

/** Record every headline the page renders, with the models of the sides it was rendered for. */
async function recordHeadlines(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __headlines: { kind: string; text: string; models: string[] }[] };
    w.__headlines = [];
    const take = () => {
      const h = document.querySelector<HTMLElement>('[data-testid="headline"]');
      const s = window.__FSDP_SIM__!.store.getState().sides;
      const models = [s.a?.run?.model ?? s.a?.source ?? '', s.b?.run?.model ?? s.b?.source ?? ''];
      if (h) w.__headlines.push({ kind: h.dataset.kind ?? '', text: h.textContent ?? '', models });
    };
    take();
    const all = { subtree: true, childList: true, characterData: true };
    new MutationObserver(take).observe(document.querySelector('main')!, all);
  });
}

type Seen = { kind: string; text: string; models: string[] };

async function headlines(page: Page): Promise<Seen[]> {
  return page.evaluate(() => (window as unknown as { __headlines: Seen[] }).__headlines);
}

const runEnded = () => {
  const s = window.__FSDP_SIM__!.store.getState();
  return !s.live.running && s.live.step > 0;
};

async function openWith(page: Page, query: string): Promise<void> {
  await page.goto(`${new URL(page.url()).origin}/${query}`);
  await page.waitForFunction(
    () => {
      const s = window.__FSDP_SIM__!.store.getState();
      return !s.simulating && s.sides.a !== null && s.sides.b !== null;
    },
    null,
    { timeout: LIVE_TIMEOUT },
  );
}

describe('only like runs are compared', () => {
  it(
    'Run live on llama3-70b × 64 trains tiny on both sides and never shows a cross-model delta',
    async () => {
      await openWith(app.page, '?model=llama3-70b&ranks=64&live.kernels=cpu&live.steps=1');
      await recordHeadlines(app.page);
      await app.page.click('[data-testid="live-run"]');
      await app.page.waitForFunction(runEnded, null, { timeout: LIVE_TIMEOUT });
      expect(await app.page.inputValue('[data-testid="cfg-model"]')).toBe('tiny');
      const side = await app.page.evaluate(() => {
        const s = window.__FSDP_SIM__!.store.getState();
        return { a: s.sides.a?.run?.model, b: s.sides.b?.source, err: s.live.error };
      });
      expect(side).toEqual({ a: 'tiny', b: 'live', err: null });
      const seen = await headlines(app.page);
      expect(seen.length).toBeGreaterThan(1);
      for (const h of seen) {
        if (h.kind === 'compare') expect(h.models[0], h.text).toBe(h.models[1]);
        if (h.models[0] !== h.models[1]) expect(h.text).not.toMatch(/step [−+]|→/);
      }
      expect(await app.page.textContent('[data-testid="headline"]')).not.toMatch(/llama3-70b|step [−+]/);
    },
    LIVE_TIMEOUT,
  );

  it(
    'after Run live A+B on CPU kernels, a WebGPU B run is not compared with the CPU A',
    async () => {
      await openWith(app.page, '?model=tiny&ranks=4&live.kernels=cpu&live.steps=1');
      await app.page.click('[data-testid="live-run-both"]');
      await app.page.waitForFunction(
        () => {
          const s = window.__FSDP_SIM__!.store.getState();
          return !s.live.running && s.live.side === 'b' && s.sides.a?.source === 'live' && s.sides.b?.run !== undefined;
        },
        null,
        { timeout: LIVE_TIMEOUT },
      );
      await expect.poll(() => app.page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('compare');
      expect(await app.page.textContent('[data-testid="headline"]')).toMatch(/\(both live, one clock\): step [−+]/);
      await app.page.selectOption('[data-testid="cfg-live-kernels"]', 'webgpu');
      await app.page.click('[data-testid="live-run"]');
      await app.page.waitForFunction(
        () => {
          const s = window.__FSDP_SIM__!.store.getState();
          return !s.live.running && s.sides.b?.run?.kernels === 'webgpu';
        },
        null,
        { timeout: LIVE_TIMEOUT },
      );
      await expect.poll(() => app.page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('run');
      const text = (await app.page.textContent('[data-testid="headline"]'))!;
      expect(text).toMatch(/A: CPU kernels; B: WebGPU kernels/);
      expect(text).not.toMatch(/step [−+]/);
      const deltas = await app.page.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
      expect(deltas.every((d) => d === '–')).toBe(true);
    },
    LIVE_TIMEOUT,
  );

  it(
    'a stopped run says where it stopped and is not compared',
    async () => {
      await openWith(app.page, '?model=tiny&ranks=4&live.kernels=cpu');
      await setField(app.page, 'live.steps', '200');
      await app.page.click('[data-testid="live-run"]');
      const stepped = () => window.__FSDP_SIM__!.store.getState().live.step >= 1;
      await app.page.waitForFunction(stepped, null, { timeout: LIVE_TIMEOUT });
      await app.page.click('[data-testid="live-stop"]');
      await expect
        .poll(() => app.page.textContent('[data-testid="live-status"]'), { timeout: 30_000 })
        .toMatch(/stopped after step \d+ of 200 \(not compared\)/);
      await expect.poll(() => app.page.getAttribute('[data-testid="headline"]', 'data-kind')).toBe('stopped');
      const headline = await app.page.textContent('[data-testid="headline"]');
      expect(headline).toMatch(/^B stopped after step \d+ \(a partial live run\): not compared/);
      const deltas = await app.page.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
      expect(deltas.every((d) => d === '–')).toBe(true);
      expect(app.pageErrors).toEqual([]);
    },
    LIVE_TIMEOUT,
  );
});
