// Regenerates the README's screenshots from the built app (run `npx vite build` first):
//   node --import tsx test/e2e/docs_screenshots.ts
// docs/screenshot.png: 1280×800 desktop, the overview story (a bucket selected, flow arrows);
// docs/screenshot_phone.png: 390×844 phone (touch, DPR 2), same story;
// docs/screenshot_projector.png: 1280×720, the same story in the presentation view (present=1).

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
    const shots = [
      { file: 'screenshot.png', viewport: { width: 1280, height: 800 }, mobile: false, query: '' },
      { file: 'screenshot_phone.png', viewport: { width: 390, height: 844 }, mobile: true, query: '' },
      { file: 'screenshot_projector.png', viewport: { width: 1280, height: 720 }, mobile: false, query: '&present=1' },
    ];
    for (const s of shots) {
      const ctx = await browser.newContext({
        viewport: s.viewport,
        isMobile: s.mobile,
        hasTouch: s.mobile,
        deviceScaleFactor: s.mobile ? 2 : 1,
        colorScheme: 'light',
      });
      await skipTour(ctx);
      const page = await ctx.newPage();
      await page.goto(`${srv.url}?story=overview${s.query}`);
      await waitForApp(page);
      await page.waitForFunction('!!window.__FSDP_SIM__.store.getState().selection');
      await page.waitForFunction(SELECTION_DRAWN);
      await page.screenshot({ path: join(ROOT, 'docs', s.file) });
      await ctx.close();
    }
  } finally {
    await browser.close();
    await srv.close();
  }
}

await main();
