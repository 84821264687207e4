// Regenerates docs/workbench.md's images from the built app (run `npx vite build` first):
//   node --import tsx test/e2e/docs_workbench_screenshots.ts
// docs/sweep.png: the sweep panel after a link's sweep of the ring bandwidth (bandwidthGBps) on
// small × 8 ranks; docs/diff.png: the diff table's top-exposed view beside the timelines.

import { join } from 'node:path';
import { launchBrowser, ROOT, startPreview } from './harness';
import { waitForApp, skipTour } from './page';

/** A timeline has drawn the selection (a string: tsx's __name helper breaks function-valued evaluate). */
const SELECTION_DRAWN =
  '((t) => (t.a?.selected ?? -1) >= 0 || (t.b?.selected ?? -1) >= 0)(window.__FSDP_SIM__.timelines)';

async function main(): Promise<void> {
  const srv = await startPreview();
  const browser = await launchBrowser();
  try {
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    await skipTour(ctx);
    const page = await ctx.newPage();
    const sweep = encodeURIComponent('bandwidthGBps=10,20,40,80,160,320');
    await page.goto(`${srv.url}?model=small&ranks=8&sweep=${sweep}`);
    await waitForApp(page);
    await page.waitForFunction(
      '((s) => !s.sweepRunning && s.sweepRows.length === 12)(window.__FSDP_SIM__.store.getState())',
      null,
      { timeout: 120_000 },
    );
    await page.hover(
      '[data-testid="sweep-chart-step"] g[data-points="aot_eager_autobucketing"] circle[data-point="2"]',
    );
    await page.locator('[data-testid="sweep-hover"]').waitFor();
    await page.locator('[data-testid="sweep-panel"]').screenshot({ path: join(ROOT, 'docs', 'sweep.png') });
    await page.click('[data-testid="diff-toggle"]');
    await page.click('[data-testid="diff-top"]');
    await page.locator('[data-testid="diff-table"] tbody tr').first().click();
    await page.waitForFunction(SELECTION_DRAWN);
    await page.locator('[data-testid="diff-panel"]').screenshot({ path: join(ROOT, 'docs', 'diff.png') });
    await ctx.close();
  } finally {
    await browser.close();
    await srv.close();
  }
}

await main();
