// Headless Chromium for the benchmarks: a Vite dev server over the repo (cross-origin isolated,
// so SharedArrayBuffer works) and a Chromium per adapter flavour (flags in chromium.config.ts).

import { createServer, type ViteDevServer } from 'vite';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumFlags, type WebGpuAdapter } from '../chromium.config';
import { ISOLATION_HEADERS } from '../vite.config';

export type Adapter = WebGpuAdapter;

export async function startServer(): Promise<{ url: string; server: ViteDevServer }> {
  const server = await createServer({
    configFile: false,
    root: new URL('..', import.meta.url).pathname,
    logLevel: 'error',
    // Own dep cache: other vite/vitest runs in this tree must not re-optimize under our pages
    // (a re-optimization reloads the page mid-bench). Pages are scanned up front for the same reason.
    cacheDir: 'node_modules/.vite-bench',
    optimizeDeps: { entries: ['bench/pages/*.html'] },
    // No HMR and no file watching: other engineers edit src/ while a bench runs; a reload would
    // destroy the page mid-measurement.
    server: { host: '127.0.0.1', port: 0, headers: ISOLATION_HEADERS, hmr: false, watch: { ignored: ['**/*'] } },
    worker: { format: 'es' },
  });
  await server.listen();
  const addr = server.httpServer?.address();
  if (!addr || typeof addr === 'string') throw new Error('bench: vite server has no address');
  return { url: `http://127.0.0.1:${addr.port}`, server };
}

export async function openPage(adapter: Adapter, url: string): Promise<{ browser: Browser; page: Page }> {
  // Without the Vulkan ICD the Node Dawn runs point this process at (coordinator_node.ts): ANGLE
  // must find lavapipe for the compatibility adapter, and Chromium brings its own SwiftShader.
  const { VK_ICD_FILENAMES: _icd, VK_DRIVER_FILES: _drivers, ...env } = process.env;
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: chromiumFlags(adapter),
    env: env as Record<string, string>,
  });
  const page = await browser.newPage();
  page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
  page.on('console', (m) => {
    if (m.type() === 'info' || m.type() === 'error') process.stderr.write(`[page ${adapter}] ${m.text()}\n`);
  });
  page.on('crash', () => process.stderr.write(`[page ${adapter}] CRASHED\n`));
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) process.stderr.write(`[page ${adapter}] navigated to ${f.url()}\n`);
  });
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { __benchReady?: boolean }).__benchReady === true, null, {
    timeout: 120_000,
  });
  return { browser, page };
}
