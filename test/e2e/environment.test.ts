// The page's environment: the no-WebGPU banner, and cross-origin isolation through
// coi-serviceworker.js on a static host that sends no COOP/COEP headers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_BASE_FLAGS, CHROMIUM_PATH } from '../../chromium.config';
import { launchBrowser, startPreview, startStaticServer } from './harness';
import { waitForApp } from './page';

let browser: Browser;
let previewSrv: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  previewSrv = await startPreview();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await previewSrv?.close();
});

describe('environment banners', () => {
  it('says live runs use CPU kernels when the browser has no WebGPU', async () => {
    const plain = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_BASE_FLAGS], // no WebGPU flag
    });
    try {
      const p = await plain.newPage({ viewport: { width: 1280, height: 800 } });
      await p.goto(previewSrv.url);
      await waitForApp(p);
      await p.waitForSelector('[data-testid="banner-cpu"]');
      expect(await p.textContent('[data-testid="banner-cpu"]')).toContain('CPU kernels');
      expect(await p.locator('[data-testid="banner-coi"]').count()).toBe(0); // preview sends COOP/COEP
    } finally {
      await plain.close();
    }
  });
});

describe('static host', () => {
  it('becomes cross-origin isolated through the service worker', async () => {
    const stat = await startStaticServer();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const p = await ctx.newPage();
      await p.goto(stat.url);
      await p.waitForFunction(() => crossOriginIsolated === true, undefined, { timeout: 30_000 });
      await waitForApp(p);
      expect(await p.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
      expect(await p.evaluate(() => typeof SharedArrayBuffer)).toBe('function');
      expect(await p.locator('[data-testid="banner-coi"]').count()).toBe(0);
    } finally {
      await ctx.close();
      await stat.close();
    }
  });
});
