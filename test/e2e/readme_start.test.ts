// The README's first command, `npm start`, run as a reader runs it: it builds the app and serves it
// on http://127.0.0.1:4173/ with the cross-origin isolation headers live training needs. It serves
// until stopped, so the unit stage's readme_commands test leaves it to this one. The server runs in
// a process group of its own, stopped as a whole at the end (npm, vite and their children).
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './harness';

const URL = 'http://127.0.0.1:4173/';
const START_MS = 300_000; // vite build on a loaded 2-core machine, then preview

let server: ChildProcess | undefined;
let log = '';

afterAll(() => {
  if (server?.pid !== undefined && server.exitCode === null) process.kill(-server.pid, 'SIGTERM');
});

/** The first answer of URL, polled until `npm start` serves it or gives up. */
async function firstAnswer(deadline: number): Promise<Response> {
  for (;;) {
    if (server?.exitCode !== null) throw new Error(`npm start exited ${server?.exitCode}\n${log}`);
    try {
      return await fetch(URL);
    } catch {
      if (Date.now() > deadline) throw new Error(`nothing answered on ${URL}\n${log}`);
      await new Promise((ok) => setTimeout(ok, 500));
    }
  }
}

describe('npm start, as the README shows it', () => {
  it(
    'serves the built app on 127.0.0.1:4173 with COOP and COEP',
    async () => {
      const taken = await fetch(URL).then(
        () => true,
        () => false,
      );
      expect(taken, `something already serves ${URL}: stop it, or this test would read its answer`).toBe(false);
      server = spawn('npm', ['start'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      server.stdout?.on('data', (d) => void (log += d));
      server.stderr?.on('data', (d) => void (log += d));
      const r = await firstAnswer(Date.now() + START_MS);
      expect(r.status).toBe(200);
      expect(r.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(r.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
      expect(await r.text()).toContain('<div id="root">');
    },
    START_MS + 10_000,
  );
});
