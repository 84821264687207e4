// Importing real profiler traces in the app (headless Chromium): HTA's .json.gz test traces are
// gunzipped in the browser, every collective they hold is counted in the metrics table, the
// figures are the importer's (HTA's), and a corrupt .gz ends in a message naming the file.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importTrace } from '../../src/trace/import';
import { computeMetrics } from '../../src/trace/metrics';
import { gunzipSync } from 'node:zlib';
import { appForFile } from './harness';
import { metric, rankStreams } from './page';
import { fixturePath } from '../helpers/fixtures';

const HTA = fixturePath('hta');
const FILES = ['sampled_rank-0.json.gz', 'sampled_rank-1.json.gz'].map((f) => join(HTA, f));

const app = appForFile();

describe('HTA test traces in the app', () => {
  it('imports .json.gz rank files and counts their send/recv collectives with HTA overlap', async () => {
    await app.page.selectOption('[data-testid="import-side"]', 'a');
    await app.page.setInputFiles('[data-testid="import-trace"]', FILES);
    const notice = await app.page.waitForSelector('[data-testid="notice-info"]');
    // what the importer left out is said, naming the file
    const said = (await notice.textContent()) ?? '';
    expect(said).toMatch(/sampled_rank-0\.json\.gz: \d+ GPU event\(s\) outside HTA's window/);
    expect((await rankStreams(app.page, 'a')).ranks).toBe(2);
    // the notice counts the ranks the files hold (the trace's world size is said apart)
    const world = await app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.a!.worldSize);
    const ofWorld = new RegExp(`events on 2 ranks \\(of a world of ${world}, as the trace says\\)`);
    expect(said).toMatch(world > 2 ? ofWorld : /events on 2 ranks\./);
    expect(said).not.toMatch(/\d+ rank\(s\)/);
    const r = importTrace(FILES.map((f) => gunzipSync(readFileSync(f)).toString()));
    if (!r.ok) throw r.error;
    const want = computeMetrics(r.value.events);
    expect(await metric(app.page, 'send_recv', 'a')).toBe(want.collectives.send_recv);
    expect(want.collectives.send_recv).toBeGreaterThan(0);
    expect(await metric(app.page, 'overlap', 'a')).toBeCloseTo(want.overlapPct, 6);
    // a simulated side has no such collectives: the rows stay hidden when both sides are 0
    expect(await app.page.locator('[data-testid="metrics"] tr[data-metric="all_to_all"]').count()).toBe(0);
  });

  it('says which file is corrupt, and keeps the page as it was', async () => {
    const before = await rankStreams(app.page, 'a');
    await app.page.setInputFiles('[data-testid="import-trace"]', {
      name: 'broken.json.gz',
      mimeType: 'application/gzip',
      buffer: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]),
    });
    await expect
      .poll(async () => (await app.page.textContent('[data-testid="notice-error"]')) ?? '')
      .toMatch(/broken\.json\.gz/);
    expect(await rankStreams(app.page, 'a')).toEqual(before);
    expect(app.pageErrors).toEqual([]);
  });
});
