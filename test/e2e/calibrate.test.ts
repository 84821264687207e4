// The calibration panel in headless Chromium, on real files: HTA's two-rank sample (the group it
// fits from the nccl:* ops, the sentence for the all-to-alls it leaves out, the assumption it
// made), fsdp-sim's own export of a pure α-β ring (its α and β come back and "Use this ring"
// puts them in the config and URL), a hostile file's error, all fitted in a worker.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kinetoFiles } from '../helpers/kineto_synth';
import { launchBrowser, startPreview } from './harness';
import { waitForApp, skipTour } from './page';
import { cli } from '../helpers/cli';
import { fixturePath } from '../helpers/fixtures';

let browser: Browser;
let page: Page;
let srv: { url: string; close: () => Promise<void> };
const pageErrors: string[] = [];
const workers: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'fsdp-calib-e2e-'));

beforeAll(async () => {
  srv = await startPreview();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await skipTour(context);
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('worker', (w) => workers.push(w.url()));
});

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, buffer: Buffer) => ({ name, mimeType: 'application/octet-stream', buffer });

async function open(query: string): Promise<void> {
  await page.goto(`${srv.url}?${query}`);
  await waitForApp(page);
}

const cell = async (col: string) =>
  Number(await page.textContent(`[data-testid="calib-groups"] td[data-col="${col}"]`));

describe('calibration panel on real traces', () => {
  it("fits HTA's sample in a worker and says why it leaves its all-to-alls out", async () => {
    await open('model=small&ranks=128');
    const hta = [0, 1].map((r) =>
      file(`sampled_rank-${r}.json.gz`, readFileSync(fixturePath('hta', `sampled_rank-${r}.json.gz`))),
    );
    await page.setInputFiles('[data-testid="calib-files"]', hta);
    await page.waitForSelector('[data-testid="calib-groups"] tr[data-group="default"]');
    expect(workers.some((u) => /calibrate/.test(u))).toBe(true);
    expect(await page.locator('[data-testid="calib-scatter"] circle').count()).toBe(12);
    expect(await cell('alpha')).toBeGreaterThan(0);
    const why = await page.locator('[data-testid="calib-unfitted"] li').allTextContents();
    expect(why).toEqual([expect.stringMatching(/^group 'default' \(all_to_all ×8\): no ring model for it here/)]);
    expect(await page.textContent('[data-testid="calib-notes"]')).toContain('distributedInfo.world_size = 128');
    expect(pageErrors).toEqual([]);
  });

  it("recovers the α and β of fsdp-sim's own export, and Use this ring applies them", async () => {
    const run = ['--model', 'small', '--ranks', '2', '--network', 'pcie-ethernet'];
    const args = ['compare', ...run, '--latency-us', '3', '--bandwidth-gbps', '80', '--backends', 'aot_eager'];
    expect((await cli([...args, '--trace', dir])).code).toBe(0);
    await open('model=small&ranks=2');
    await page.setInputFiles('[data-testid="calib-files"]', [
      file('aot_eager.trace.json', readFileSync(join(dir, 'aot_eager.trace.json'))),
    ]);
    await page.waitForSelector('[data-testid="calib-groups"] tr[data-group="dp"]');
    expect(await cell('alpha')).toBeCloseTo(3, 2);
    expect(await cell('beta')).toBeCloseTo(80, 1);
    for (const cls of ['matmul', 'attention', 'elementwise']) {
      const s = await page.textContent(`[data-testid="calib-scales"] tr[data-cls="${cls}"] td[data-col="scale"]`);
      expect(Number(s)).toBeCloseTo(1, 2);
    }
    expect(await page.locator('[data-testid="calib-unfitted"]').count()).toBe(0);
    await page.click('[data-testid="calib-apply"]');
    await page.waitForFunction(
      () => /latencyUs=3\b/.test(location.search) && /bandwidthGBps=80\b/.test(location.search),
    );
    // what the fit found, to the precision of the trace's whole-nanosecond times
    const cfg = await page.evaluate(() => window.__FSDP_SIM__!.store.getState().config);
    expect(cfg.network).toBe('pcie-ethernet');
    expect(cfg.latencyUs).toBeCloseTo(3, 2);
    expect(cfg.bandwidthGBps).toBeCloseTo(80, 2);
    expect(pageErrors).toEqual([]);
  });

  it('names the field of a malformed kernel, and a trace of another world size', async () => {
    await open('model=small&ranks=4');
    const [f] = kinetoFiles(true);
    const evs = (f.json as { traceEvents: Record<string, unknown>[] }).traceEvents;
    const i = evs.findIndex((e) => e.cat === 'kernel');
    evs[i].dur = '50';
    await page.setInputFiles('[data-testid="calib-files"]', [file(f.name, Buffer.from(JSON.stringify(f.json)))]);
    await page.waitForSelector('[data-testid="calib-error"]');
    expect(await page.textContent('[data-testid="calib-error"]')).toBe(
      `${f.name}.traceEvents[${i}].dur must be a number ≥ 0 that ends the event before 2^53 µs ` +
        `(ts ${evs[i].ts}), got "50"`,
    );
    await open('model=small&ranks=8');
    await page.setInputFiles(
      '[data-testid="calib-files"]',
      kinetoFiles(false).map((k) => file(k.name, Buffer.from(JSON.stringify(k.json)))),
    );
    await page.waitForSelector('[data-testid="calib-error"]');
    expect(await page.textContent('[data-testid="calib-error"]')).toMatch(
      /^the trace's distributedInfo\.world_size is 4 but the config has ranks = 8/,
    );
    expect(pageErrors).toEqual([]);
  });
});
