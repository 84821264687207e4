// tools/lint/stems.mjs: fails when two source files in src/ share a stem (index.ts excepted) or a
// worker entry is not named <name>.worker.ts, naming the files.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const TOOL = fileURLToPath(new URL('../../../tools/lint/stems.mjs', import.meta.url));
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function check(paths: string[]) {
  root = mkdtempSync(join(tmpdir(), 'stems-'));
  for (const p of paths) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), 'export {};\n');
  }
  try {
    await promisify(execFile)(process.execPath, [TOOL], { env: { ...process.env, STEMS_ROOT: root } });
    return { code: 0, stderr: '' };
  } catch (e) {
    return e as { code: number; stderr: string };
  }
}

describe('stems', () => {
  it('passes distinct names, with an index.ts in every folder', async () => {
    expect((await check(['src/a/index.ts', 'src/b/index.ts', 'src/a/x.ts', 'src/b/y.tsx'])).code).toBe(0);
  });

  it('fails on a shared stem across folders and extensions, naming both files', async () => {
    const r = await check(['src/a/types.ts', 'src/b/types.tsx', 'src/c.ts']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("stem 'types' is used by 2 files: src/a/types.ts, src/b/types.tsx");
  });

  it('fails on a worker entry named another way', async () => {
    const r = await check(['src/a/rank.worker.ts', 'src/a/rank_node_worker.ts']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/a/rank_node_worker.ts: a worker entry is named <name>.worker.ts');
    expect(r.stderr).not.toContain('rank.worker.ts:');
  });
});
