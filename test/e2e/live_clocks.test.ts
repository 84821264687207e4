// Honest live clocks in headless Chromium: each timeline's header names its clock; a measured
// live side next to a simulated one gets no B-vs-A change (a note says why) and no headline
// comparison; "Run live A+B" runs both backends live on the same workers, after which both
// sides are measured and the deltas return. The adapter is named before any run.

import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { appForFile } from './harness';
import { setField } from './page';

const app = appForFile({ width: 1440, height: 900 });

const LIVE_TIMEOUT = 90_000;

async function deltas(p: Page): Promise<string[]> {
  return p.locator('[data-testid="metrics"] td[data-delta]').allTextContents();
}

async function sources(p: Page): Promise<[string | undefined, string | undefined]> {
  return p.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState().sides;
    return [s.a?.source, s.b?.source] as [string | undefined, string | undefined];
  });
}

describe('live clocks', () => {
  it("names the adapter before any run and each side's clock in its header", async () => {
    await app.page.waitForSelector('[data-testid="live-adapter"]');
    expect((await app.page.textContent('[data-testid="live-adapter"]'))!.length).toBeGreaterThan(3);
    expect(await app.page.textContent('[data-testid="clock-a"]')).toMatch(/simulated time \(cost model\)/);
    expect(await app.page.textContent('[data-testid="clock-b"]')).toMatch(/simulated time \(cost model\)/);
    expect((await deltas(app.page)).filter((d) => d !== '–').length).toBeGreaterThan(3);
  });

  it('a measured live B beside simulated A shows no cross-clock delta', async () => {
    await app.page.selectOption('[data-testid="cfg-live-kernels"]', 'cpu');
    await app.page.selectOption('[data-testid="cfg-live-timing"]', 'measured');
    await setField(app.page, 'live.steps', '2');
    await app.page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    await app.page.click('[data-testid="live-run"]');
    // the first status names the stage, not "step 0/2 · 0.00 steps/s"
    await expect
      .poll(() => app.page.textContent('[data-testid="live-status"]'), { timeout: LIVE_TIMEOUT })
      .toMatch(/starting \d+ workers|step [12]\/2/);
    await app.page.waitForSelector('[data-testid="live-run"]', { timeout: LIVE_TIMEOUT });
    expect(await sources(app.page)).toEqual(['sim', 'live']);
    expect(await app.page.textContent('[data-testid="clock-b"]')).toMatch(/real time, measured/);
    expect(await app.page.textContent('[data-testid="clock-a"]')).toMatch(/simulated/);
    expect(await deltas(app.page)).toEqual((await deltas(app.page)).map(() => '–'));
    const judged = app.page.locator('[data-testid="metrics"] td.better, [data-testid="metrics"] td.worse');
    expect(await judged.count()).toBe(0);
    expect(await app.page.textContent('[data-testid="metrics-clock-note"]')).toMatch(/different clocks/i);
    expect(await app.page.textContent('[data-testid="headline"]')).toMatch(/different clocks/);
    expect(await app.page.textContent('[data-testid="live-status"]')).toMatch(/step 2\/2 · \d+ ms\/step/);
    // Explain and the memory chart stay available: the plan the workers ran
    await app.page.selectOption('[data-testid="explain-side"]', 'b');
    await app.page.waitForSelector('[data-testid="explain-live-plan"]');
    expect(await app.page.locator('[data-testid="explain-reasons"] li').count()).toBeGreaterThan(0);
    const legend = await app.page.locator('[data-testid="memory-chart"] + .chart-legend').textContent();
    expect(legend).toMatch(/B aot_eager_autobucketing \(live\).*simulated for the live plan/);
    expect(await app.page.locator('[data-testid="memory-chart"] path').count()).toBeGreaterThan(1);
  });

  it('Run live A+B puts both sides on the measured clock and compares them', async () => {
    await app.page.click('[data-testid="live-run-both"]');
    await expect.poll(() => sources(app.page), { timeout: LIVE_TIMEOUT }).toEqual(['live', 'live']);
    await expect
      .poll(
        () =>
          app.page.evaluate(() => {
            const s = window.__FSDP_SIM__!.store.getState();
            return !s.live.running && s.live.side === 'b' && s.live.step === s.live.steps;
          }),
        { timeout: LIVE_TIMEOUT },
      )
      .toBe(true);
    await app.page.waitForSelector('[data-testid="live-run"]');
    expect(await app.page.textContent('[data-testid="clock-a"]')).toMatch(/real time, measured/);
    expect(await app.page.textContent('[data-testid="clock-b"]')).toMatch(/real time, measured/);
    expect(await app.page.locator('[data-testid="metrics-clock-note"]').count()).toBe(0);
    const stepDelta = await app.page.textContent('[data-testid="metrics"] td[data-delta="step"]');
    expect(stepDelta).toMatch(/^[−+][\d.]+ %$|^0$|×$/);
    expect(await app.page.textContent('[data-testid="headline"]')).toMatch(
      /^autobucketing vs aot_eager \(both live, one clock\): step [−+]/,
    );
  });

  it('preset timing says its live timeline is cost-model time, not measured', async () => {
    await app.page.selectOption('[data-testid="cfg-live-timing"]', 'preset');
    await app.page.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
    await app.page.click('[data-testid="live-run"]');
    await expect
      .poll(() => app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.source), {
        timeout: LIVE_TIMEOUT,
      })
      .toBe('live');
    await app.page.waitForSelector('[data-testid="live-run"]', { timeout: LIVE_TIMEOUT });
    expect(await app.page.textContent('[data-testid="clock-b"]')).toMatch(
      /cost-model time replayed for the live schedule \(not measured\)/,
    );
    // editing a live.* field afterwards keeps the live timeline (no re-simulation)
    await setField(app.page, 'live.steps', '5');
    await app.page.waitForFunction(() => {
      const st = window.__FSDP_SIM__!.store.getState();
      return st.config.live.steps === 5 && !st.simulating && location.search.includes('steps=5');
    });
    expect(await app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().sides.b?.source)).toBe('live');
    expect(app.pageErrors).toEqual([]);
  });
});
