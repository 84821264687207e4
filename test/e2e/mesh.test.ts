// A mesh in the app, in headless Chromium: the parallelism fields in the config panel, one comm
// lane per process group on every rank, a mesh whose degrees do not multiply to ranks refused at
// the field with the message naming it, and "Run live" training tiny on the configured mesh.

import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { appForFile } from './harness';
import { expectedLanes, laneCount, metric, rankStreams, setField, storeConfig } from './page';

const app = appForFile(undefined, '?model=tiny&ranks=4'); // the degrees below are tiny × 4's

const streamsOf = (p: Page) =>
  p.evaluate(() =>
    [...new Set((window.__FSDP_SIM__!.store.getState().sides.a?.events ?? []).map((e) => e.stream))].sort(),
  );

describe('mesh in the app', () => {
  it('FSDP 2 × TP 2 on 4 ranks: a comm lane per group on every rank', async () => {
    await setField(app.page, 'parallelism.tensor_parallel_degree', '2');
    await expect.poll(() => streamsOf(app.page)).toEqual(['comm:dp_shard', 'comm:tp', 'compute']);
    const rs = await rankStreams(app.page, 'a');
    expect(rs.ranks).toBe(4);
    expect(rs.pairs).toBe(4 * 3);
    await expect.poll(async () => laneCount(app.page, 'a')).toBe(await expectedLanes(app.page, 'a'));
    // HSDP 2 × 2 × TP 2 on 8 ranks: the dp_replicate group gets its own lane too
    await setField(app.page, 'ranks', '8');
    await setField(app.page, 'parallelism.data_parallel_replicate_degree', '2');
    await expect.poll(() => streamsOf(app.page)).toEqual(['comm:dp_replicate', 'comm:dp_shard', 'comm:tp', 'compute']);
    // the metrics split exposed communication per group: each part of the whole, together covering it
    await app.page.waitForSelector('[data-testid="metrics"] tr[data-metric="exposed:dp_replicate"]');
    for (const side of ['a', 'b'] as const) {
      const total = await metric(app.page, 'exposed', side);
      const parts = await Promise.all(
        ['dp_shard', 'tp', 'dp_replicate'].map((g) => metric(app.page, `exposed:${g}`, side)),
      );
      for (const p of parts) expect(p).toBeLessThanOrEqual(total + 1e-6);
      expect(parts.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(total - 1e-6);
    }
    expect(app.pageErrors).toEqual([]);
  });

  it('the explain panel names the process group of the picked collective', async () => {
    const sel = '[data-testid="explain-node"]';
    await app.page.selectOption('[data-testid="explain-side"]', 'b');
    const options = await app.page.$$eval(`${sel} option`, (os) => os.map((o) => (o as HTMLOptionElement).value));
    const ar = options.find((o) => o.endsWith('.all_reduce') && !o.includes('tp_'));
    expect(ar).toBeDefined();
    await app.page.selectOption(sel, ar!);
    await expect
      .poll(() => app.page.textContent('[data-testid="explain-group"]'))
      .toMatch(/all-reduce on process group dp_replicate: 2 ranks, 4 ranks apart/);
    const ag = options.find((o) => o.endsWith('.all_gather') && !o.includes('tp_'))!;
    await app.page.selectOption(sel, ag);
    await expect
      .poll(() => app.page.textContent('[data-testid="explain-group"]'))
      .toMatch(/all-gather on process group dp_shard: 2 ranks, 2 ranks apart/);
    expect(app.pageErrors).toEqual([]);
  });

  it('refuses degrees that do not divide the ranks, at the field, and keeps the last good mesh', async () => {
    await setField(app.page, 'parallelism.tensor_parallel_degree', '3');
    const err = await app.page.waitForSelector('[data-testid="cfg-parallelism-tensor_parallel_degree-error"]');
    expect(await err.textContent()).toMatch(/parallelism\.tensor_parallel_degree .*must divide ranks \(8\)/);
    expect(
      ((await storeConfig(app.page)) as { parallelism: { tensor_parallel_degree: number } }).parallelism
        .tensor_parallel_degree,
    ).toBe(2);
    expect(app.pageErrors).toEqual([]);
  });

  it('Run live trains tiny on the configured mesh: FSDP 2 × TP 2 on 4 workers, a comm lane per group', async () => {
    await setField(app.page, 'ranks', '4');
    await setField(app.page, 'parallelism.data_parallel_replicate_degree', '1');
    await setField(app.page, 'parallelism.tensor_parallel_degree', '2');
    await app.page.selectOption('[data-testid="cfg-live-kernels"]', 'cpu');
    await setField(app.page, 'live.steps', '2');
    await app.page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    await app.page.click('[data-testid="live-run"]');
    await expect
      .poll(() => app.page.textContent('[data-testid="live-status"]'), { timeout: 120_000 })
      .toMatch(/tiny on 4 workers \(FSDP 2 × TP 2\) · step 2\/2/);
    const idle = () => !window.__FSDP_SIM__!.store.getState().live.running;
    await app.page.waitForFunction(idle, undefined, { timeout: 60_000 });
    const live = await app.page.evaluate(() => {
      const st = window.__FSDP_SIM__!.store.getState();
      const streams = [...new Set(st.sides.b?.events.map((e) => e.stream))].sort();
      return { error: st.live.error, losses: st.live.losses.map((p) => p.loss), streams };
    });
    expect(live.error).toBeNull();
    expect(live.losses).toHaveLength(2);
    expect(live.losses.every(Number.isFinite)).toBe(true);
    expect(live.streams).toEqual(['comm:dp_shard', 'comm:tp', 'compute']);
    expect(app.pageErrors).toEqual([]);
  }, 240_000);
});
