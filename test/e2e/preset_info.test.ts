// What the preset assumes, and memory as torch reports it, in the built app (headless Chromium):
// the explain panel lists the hardware and network constants the cost model uses with their
// sources and follows the config; the metrics table shows the caching allocator's allocated and
// reserved peaks, the same numbers the pipeline gives in Node, and the HBM-fit check reads the
// reserved one.

import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { validateConfig, type SimConfig } from '../../src/config';
import { HARDWARE_PRESETS, hardwareAssumptions, networkAssumptions, type HardwareName } from '../../src/estimate';
import { compareBackends } from '../../src/pipeline';
import { networkFor } from '../../src/pipeline/cost';
import { stepFigures } from '../../src/pipeline/figures';
import { appForFile } from './harness';
import { metric, setField, storeConfig, waitForApp } from './page';

const app = appForFile();

const ROWS = '[data-testid="preset-info"] tr[data-assumption]';

/** [group:key, value, source] of every row the panel shows. */
async function shownRows(p: Page): Promise<string[][]> {
  return p.$$eval(ROWS, (rows) =>
    rows.map((r) => {
      const text = (sel: string) => r.querySelector(sel)?.textContent ?? '';
      return [r.getAttribute('data-assumption') ?? '', text('.value'), text('.source')];
    }),
  );
}

async function currentConfig(p: Page): Promise<SimConfig> {
  const cfg = validateConfig(await storeConfig(p));
  if (!cfg.ok) throw cfg.error;
  return cfg.value;
}

/** What the panel should show for the app's config, from the estimate layer itself. */
function expectedRows(cfg: SimConfig): string[][] {
  const overridden = cfg.bandwidthGBps !== null || cfg.latencyUs !== null;
  const hw = hardwareAssumptions(HARDWARE_PRESETS[cfg.hardware as HardwareName]);
  const net = networkAssumptions(networkFor(cfg), overridden);
  return [
    ...hw.map((a) => [`hardware:${a.key}`, a.value, a.source]),
    ...net.map((a) => [`network:${a.key}`, a.value, a.source]),
  ];
}

describe('what the preset assumes (explain panel)', () => {
  it('lists every hardware and network constant with its source, and follows the hardware and overrides', async () => {
    await app.page.locator('[data-testid="preset-info"] summary').click();
    expect(await app.page.locator(ROWS).first().isVisible()).toBe(true);
    expect(await shownRows(app.page)).toEqual(expectedRows(await currentConfig(app.page)));
    const source = (key: string) => app.page.textContent(`tr[data-assumption="${key}"] .source`);
    expect(await source('hardware:gemm')).toMatch(/MAMF/);
    expect(await source('hardware:attn-bwd')).toMatch(/FlashAttention-2/);
    expect(await source('network:intra-bw')).toMatch(/nccl-tests/);

    await app.page.selectOption('[data-testid="cfg-hardware"]', 'h100-96gb');
    await expect.poll(async () => (await currentConfig(app.page)).hardware).toBe('h100-96gb');
    await expect.poll(() => shownRows(app.page)).toEqual(expectedRows(await currentConfig(app.page)));
    expect(await source('hardware:bf16-peak')).toMatch(/power/);

    await setField(app.page, 'bandwidthGBps', '100');
    await expect.poll(async () => (await currentConfig(app.page)).bandwidthGBps).toBe(100);
    await expect.poll(() => shownRows(app.page)).toEqual(expectedRows(await currentConfig(app.page)));
    expect(await source('network:intra-bw')).toMatch(/your override/);
    expect(app.pageErrors).toEqual([]);
  });
});

describe('memory as torch reports it (metrics table)', () => {
  it("shows the allocator's peaks as the pipeline computes them; HBM fit checks the reserved one", async () => {
    // llama3-8b × 8 at seq 10752 without AC on an 80 GB H100: B's (autobucketing) live tensors and
    // allocated peak fit, its reserved peak does not; A's reserved peak fits
    const query = 'model=llama3-8b&ranks=8&activationCheckpointing=none&seqLen=10752';
    await app.page.goto(`${new URL(app.page.url()).origin}/?${query}`);
    await waitForApp(app.page);
    const cfg = await currentConfig(app.page);
    expect(cfg.hardware).toBe('h100');
    const runs = compareBackends(cfg);
    const hbm = HARDWARE_PRESETS.h100.hbmBytes;
    for (const [side, run] of [
      ['a', runs.a],
      ['b', runs.b],
    ] as const) {
      const f = stepFigures(run);
      expect(await metric(app.page, 'peak_allocated', side)).toBe(f.peakAllocatedBytes);
      expect(await metric(app.page, 'peak_reserved', side)).toBe(f.peakReservedBytes);
      expect(f.peakReservedBytes).toBeGreaterThanOrEqual(f.peakAllocatedBytes);
    }
    expect(await metric(app.page, 'peak_reserved', 'a')).toBeLessThanOrEqual(hbm);
    expect(await metric(app.page, 'peak_reserved', 'b')).toBeGreaterThan(hbm);
    // an allocated-peak check would pass
    expect(await metric(app.page, 'peak_allocated', 'b')).toBeLessThanOrEqual(hbm);
    expect(await metric(app.page, 'peak', 'b')).toBeLessThanOrEqual(hbm); // and so would the live-tensor one

    const warning = (await app.page.textContent('[data-testid="metrics-hbm-warning"]'))!;
    // fmtBytes puts a no-break space before the unit
    const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(2).replace('.', '\\.');
    const b = stepFigures(runs.b);
    const said = `B peak reserved ${gib(b.peakReservedBytes)}\\sGiB > h100 HBM ${gib(hbm)} GiB \\(80 GB\\)`;
    const allocated = `, with peak allocated ${gib(b.peakAllocatedBytes)}\\sGiB`;
    expect(warning).toMatch(new RegExp(`Does not fit in HBM: ${said}${allocated}`));
    expect(warning).not.toMatch(/\bA peak reserved/);
    const warned = await app.page.getAttribute('[data-testid="metrics"] tr[data-metric="peak_reserved"]', 'class');
    expect(warned).toMatch(/warn-text/);
    expect(app.pageErrors).toEqual([]);
  }, 120_000);
});
