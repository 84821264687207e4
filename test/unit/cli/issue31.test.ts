// Issue 31 ("hostile files"): the CLI on inputs made to break it. Each case failed before its fix;
// every input is made here, in a fresh temporary folder.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli, tempDirs } from './run_cli';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const tempDir = tempDirs('fsdp-sim-31-');
const sh = (script: string) =>
  promisify(execFile)('bash', ['-c', script], { cwd: REPO }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

describe('write errors', () => {
  it('stdout on /dev/full: one line naming the stream and the reason, exit 1, no stack', async () => {
    const r = await sh('node --import tsx src/cli/cli.ts compare --model tiny --ranks 2 > /dev/full');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('fsdp-sim: cannot write to standard output: ENOSPC (write); output is incomplete\n');
  });

  it('compare --trace under /proc/self ends with a clear error (it used to spin forever)', async () => {
    const r = await cli(['compare', '--model', 'tiny', '--ranks', '2', '--backends', 'aot_eager', '--trace', '/proc/self/x']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^fsdp-sim compare: --trace cannot create a folder next to '\/proc\/self\/x': ENOENT$/);
  });
});

describe('compare --trace DIR: one run, switched into place', () => {
  const run = (dir: string, ...extra: string[]) =>
    cli(['compare', '--model', 'tiny', '--ranks', '4', '--backends', 'aot_eager', '--trace', dir, ...extra]);

  it('keeps files it does not write, drops stale rank files, leaves no temporaries', async () => {
    const parent = tempDir();
    const d = join(parent, 'out');
    expect((await run(d, '--per-rank', '--ranks', '8')).code).toBe(0);
    writeFileSync(join(d, 'notes.txt'), 'mine');
    expect((await run(d, '--per-rank')).code).toBe(0);
    expect(readdirSync(join(d, 'aot_eager')).sort()).toEqual([0, 1, 2, 3].map((r) => `rank${r}.pt.trace.json`));
    expect(readFileSync(join(d, 'notes.txt'), 'utf8')).toBe('mine');
    expect(readdirSync(parent)).toEqual(['out']);
  });

  it('writes through a link to the folder, never into what a planted link names', async () => {
    const parent = tempDir();
    const real = join(parent, 'real');
    mkdirSync(real);
    const victim = join(parent, 'victim');
    writeFileSync(victim, 'untouched');
    symlinkSync(victim, join(real, 'aot_eager.trace.json'));
    symlinkSync(real, join(parent, 'link'));
    expect((await run(join(parent, 'link'))).code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(JSON.parse(readFileSync(join(real, 'aot_eager.trace.json'), 'utf8')).traceEvents.length).toBeGreaterThan(0);
    expect(readdirSync(parent).sort()).toEqual(['link', 'real', 'victim']);
    expect(existsSync(join(parent, 'link'))).toBe(true);
  });
});
