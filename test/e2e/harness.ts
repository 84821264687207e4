// E2E harness: start `vite preview` (COOP/COEP headers from vite.config.ts) and a plain static
// server (no isolation headers) on random free ports on 127.0.0.1, launch /usr/bin/chromium
// through playwright-core, and stop everything at the end.

import { createServer, type Server } from 'node:http';
import { readFile, stat, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import type { AddressInfo } from 'node:net';
import { preview, type PreviewServer } from 'vite';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { waitForApp, skipTour } from './page';

import { CHROMIUM_PATH, chromiumFlags } from '../../chromium.config';
import { REPO_ROOT as ROOT } from '../helpers/fixtures';

export { ROOT };
export const DIST = join(ROOT, 'dist');
export const ARTIFACTS = join(ROOT, 'artifacts');

export async function startPreview(): Promise<{ url: string; close: () => Promise<void> }> {
  if (!existsSync(join(DIST, 'index.html')))
    throw new Error(`no build in ${DIST}: run \`npm run test:e2e\` (it runs vite build first)`);
  const server: PreviewServer = await preview({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
  });
  const addr = server.httpServer.address() as AddressInfo;
  return { url: `http://127.0.0.1:${addr.port}/`, close: () => server.close() };
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
  '.wgsl': 'text/plain',
  '.ico': 'image/x-icon',
};

/** A static file server for dist/ that sends no COOP/COEP: a GitHub-Pages-like host. */
export async function startStaticServer(dir = DIST): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      let file = normalize(join(dir, path));
      if (!file.startsWith(dir)) throw new Error('outside root');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`);
  // WebGPU on, core WebGPU (SwiftShader)
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: chromiumFlags('swiftshader'), headless: true });
}

export async function artifactsDir(): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  return ARTIFACTS;
}

/** A session on the built app: preview server, browser, one page past the tour, page errors collected. */
export interface AppSession {
  readonly page: Page;
  readonly pageErrors: string[];
  close(): Promise<void>;
}

/**
 * The app for one test file: opened before its tests (vitest beforeAll) and closed after them.
 * Read `page` and `pageErrors` inside the tests, once it is open.
 */
export function appForFile(
  viewport?: { width: number; height: number },
  query = '',
): Pick<AppSession, 'page' | 'pageErrors'> {
  let app: AppSession | undefined;
  const open = (): AppSession => {
    if (app === undefined) throw new Error('the app is not open yet: use app.page inside a test or hook');
    return app;
  };
  beforeAll(async () => {
    app = await openApp(viewport, query);
  });
  afterAll(async () => app?.close());
  return {
    get page() {
      return open().page;
    },
    get pageErrors() {
      return open().pageErrors;
    },
  };
}

/** The app at `query` ('' opens the first screen; '?model=tiny&ranks=4' a small config). */
export async function openApp(viewport = { width: 1280, height: 800 }, query = ''): Promise<AppSession> {
  const srv = await startPreview();
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  await skipTour(context);
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${srv.url}${query}`);
  await waitForApp(page);
  return {
    page,
    pageErrors,
    close: async () => {
      await browser.close();
      await srv.close();
    },
  };
}
