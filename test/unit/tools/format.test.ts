// The formatter in `npm run lint`: the lint script runs `biome check` (lint and layout together), and
// with the repository's own biome.jsonc an unformatted file fails it while its formatted twin passes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/fixtures';

const BIOME = join(REPO_ROOT, 'node_modules/@biomejs/biome/bin/biome');
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The repository's Biome config, less what ties it to the repository (its schema path, git). */
function treeConfig(): string {
  const text = readFileSync(join(REPO_ROOT, 'biome.jsonc'), 'utf8');
  return text.replace(/^\s*"\$schema".*\n/m, '').replace(/"vcs": \{[^}]*\}/, '"vcs": { "enabled": false }');
}

async function check(source: string): Promise<{ code: number; out: string }> {
  root = mkdtempSync(join(tmpdir(), 'format-'));
  writeFileSync(join(root, 'biome.jsonc'), treeConfig());
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src/a.ts'), source);
  try {
    const r = await promisify(execFile)(process.execPath, [BIOME, 'check', '--error-on-warnings', '.'], { cwd: root });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe('the formatter in npm run lint', () => {
  it('is part of the lint script', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.lint).toMatch(/^biome check --error-on-warnings \. &&/);
  });

  it('fails an unformatted file and passes the same code formatted', async () => {
    const bad = await check('export const x = {a: 1, b: "two"}\n');
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/format/i);
    const good = await check("export const x = { a: 1, b: 'two' };\n");
    expect(good.out).not.toMatch(/Formatter would have printed/);
    expect(good.code).toBe(0);
  });
});
