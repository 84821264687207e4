// A tool of tools/lint run on a small tree written for one test: each tool reads the tree's root from
// an environment variable (LAYERS_ROOT, STEMS_ROOT, ...) and its baseline from tools/lint/ there.
// The tree is a fresh temporary folder, removed after the test.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';
import { REPO_ROOT } from './fixtures';

export interface ToolRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface LintTree {
  /** Writes `files` (path → text) into a fresh tree and runs the tool on it with `args`. */
  run(files: Readonly<Record<string, string>>, ...args: string[]): Promise<ToolRun>;
  /** A JSON file of the last tree, parsed (a baseline the tool rewrote). */
  json(path: string): unknown;
}

/** The runner of tools/lint/`tool` (e.g. 'layers.mjs'), its tree named by the variable `rootVar`. */
export function lintTree(tool: string, rootVar: string): LintTree {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  return {
    async run(files, ...args) {
      root = mkdtempSync(join(tmpdir(), `${tool.replace(/\.mjs$/, '')}-`));
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(join(root, p, '..'), { recursive: true });
        writeFileSync(join(root, p), text);
      }
      try {
        const env = { ...process.env, [rootVar]: root };
        const r = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'tools/lint', tool), ...args], { env });
        return { code: 0, ...r };
      } catch (e) {
        return e as ToolRun;
      }
    },
    json: (path) => JSON.parse(readFileSync(join(root, path), 'utf8')),
  };
}
