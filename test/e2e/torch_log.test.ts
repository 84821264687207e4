// An FX dump imported with torch's own log of the pass (headless Chromium): the explain panel
// says how far B agrees with torch, names torch's and fsdp-sim's decision where they differ,
// and timeline B outlines the collectives torch decided otherwise.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_PROFILES } from '../../src/backends';
import { appForFile } from './harness';
import { probeOf } from './page';
import { fixturePath } from '../helpers/fixtures';

const FIX = fixturePath('torch_pass');
const GRAPH = 'llama8b_2layer_seq2048_saved';
const gz = (p: string) => gunzipSync(readFileSync(join(FIX, p))).toString('utf8');
const dir = mkdtempSync(join(tmpdir(), 'fsdp-sim-torch-log-'));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

/** The fixture's log is of torch's pass with 2.11's knobs: the app's knobs set to them where the default differs. */
const TORCH_2_11 = AUTOBUCKETING_PROFILES['torch-2.11'];
const AS_2_11 = (Object.keys(TORCH_2_11) as (keyof typeof TORCH_2_11)[])
  .filter((k) => TORCH_2_11[k] !== AUTOBUCKETING_DEFAULTS[k])
  .map((k) => `autobucketing.${k}=${TORCH_2_11[k]}`)
  .join('&');
const app = appForFile(undefined, `?model=tiny&ranks=4&${AS_2_11}`); // the config the fixture's torch log agrees under

describe("an FX dump with torch's log of the pass", () => {
  it('agrees fully with the log torch wrote for it', async () => {
    const files = [
      write('fw.json', gz(`fx/${GRAPH}_fw.json.gz`)),
      write('bw.json', gz(`fx/${GRAPH}_bw.json.gz`)),
      write('torch_pass.log', gz(`logs/${GRAPH}_fw.log.gz`) + gz(`logs/${GRAPH}_bw.log.gz`)),
    ];
    await app.page.setInputFiles('[data-testid="import-fx"]', files);
    const torch = await app.page.waitForSelector('[data-testid="explain-torch"]');
    expect(await torch.textContent()).toMatch(
      /forward — buckets 100\.0 %, prefetches 100\.0 %.*backward — buckets 100\.0 %, prefetches 100\.0 %/,
    );
    expect((await probeOf(app.page, 'b')).flagged).toBe(0);
    expect(await app.page.locator('[data-testid="notice-error"]').count()).toBe(0);
  });

  it('shows the imported graph as the current model, says a reload drops it, and goes back', async () => {
    const model = app.page.locator('[data-testid="cfg-model"]');
    const shown = await model.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text);
    expect(shown).toBe('FX graph: fw.json + bw.json');
    const note = app.page.locator('[data-testid="cfg-fx-import"]');
    const says = await note.textContent();
    expect(says).toMatch(/imported FX graph fw\.json \+ bw\.json/);
    expect(says).toMatch(/a reload or any config change .*drops the import/);
    const preset = await app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().config.model);
    await note.locator('button').click();
    await note.waitFor({ state: 'detached' });
    await expect.poll(() => model.inputValue()).toBe(preset);
    const fx = () => app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.fxGraph);
    await expect.poll(fx).toBeUndefined();
  });

  it('names both decisions where the log differs, and outlines those collectives on B', async () => {
    const lines = (gz(`logs/${GRAPH}_fw.log.gz`) + gz(`logs/${GRAPH}_bw.log.gz`)).split('\n');
    const k = lines.findIndex((l) => /bucketed \S+ with \S+ using timeline position/.test(l));
    const moved = /bucketed (\S+) with/.exec(lines[k])![1];
    lines.splice(k, 1); // torch "did not bucket" this one
    const files = [
      write('fw.json', gz(`fx/${GRAPH}_fw.json.gz`)),
      write('bw.json', gz(`fx/${GRAPH}_bw.json.gz`)),
      write('edited.log', lines.join('\n')),
    ];
    await app.page.setInputFiles('[data-testid="import-fx"]', files);
    await expect
      .poll(async () => (await app.page.textContent('[data-testid="explain-torch"]')) ?? '')
      .toMatch(/forward — buckets (?!100\.0 %)\d+\.\d %/);
    await app.page.selectOption('[data-testid="explain-side"]', 'b');
    await app.page.selectOption('[data-testid="explain-node"]', moved);
    const says = await app.page.textContent('[data-testid="explain-torch-disagreements"]');
    expect(says).toContain(`torch: not bucketed; fsdp-sim: bucketed with`);
    expect((await probeOf(app.page, 'b')).flagged).toBeGreaterThan(0);
    expect(app.pageErrors).toEqual([]);
  });

  it('refuses a log without its dump, naming the file', async () => {
    await app.page.setInputFiles('[data-testid="import-fx"]', [write('alone.log', gz(`logs/${GRAPH}_fw.log.gz`))]);
    await expect
      .poll(async () => (await app.page.textContent('[data-testid="notice-error"]')) ?? '')
      .toMatch(/alone\.log.*needs its FX graph dump/);
  });
});
