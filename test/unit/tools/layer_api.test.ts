// tools/lint/layer_api.mjs on a small tree: a name a folder's index.ts exports must be imported by
// src/ or bench/ outside the folder (statically, as `const { a } = await import(...)`, or through a
// sibling entry that re-exports it); a name only tests import fails, naming the entry and the name;
// a baselined finding passes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/fixtures';

const TOOL = join(REPO_ROOT, 'tools/lint/layer_api.mjs');
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function check(files: Record<string, string>, baseline: string[]) {
  root = mkdtempSync(join(tmpdir(), 'layer-api-'));
  const tree = { 'bench/.keep.ts': '', 'test/.keep.ts': '', ...files };
  for (const [p, text] of Object.entries(tree)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  mkdirSync(join(root, 'tools/lint'), { recursive: true });
  writeFileSync(join(root, 'tools/lint/layer_api.json'), JSON.stringify(baseline));
  try {
    const env = { ...process.env, LAYER_API_ROOT: root };
    const r = await promisify(execFile)(process.execPath, [TOOL], { env });
    return { code: 0, ...r };
  } catch (e) {
    return e as { code: number; stdout: string; stderr: string };
  }
}

const low = {
  'src/low/index.ts': "export { a, b, c } from './impl';\n",
  'src/low/index_more.ts': "export * from './index';\n",
  'src/low/impl.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
};

describe('layer_api', () => {
  it('passes names imported outside the folder: statically, dynamically, through a sibling entry', async () => {
    const users = {
      'src/high/x.ts': "import { a } from '../low';\n",
      'bench/y.ts': "export async function f() {\n  const { b } = await import('../src/low');\n  return b;\n}\n",
      'src/high/z.ts': "import { c } from '../low/index_more';\n",
    };
    expect((await check({ ...low, ...users }, [])).code).toBe(0);
  });

  it('fails a name only tests and its own folder import, naming the entry and the name', async () => {
    const users = {
      'src/high/x.ts': "import { a, b } from '../low';\n",
      'src/low/inner.ts': "import { c } from '.';\n",
      'test/t.test.ts': "import { c } from '../src/low';\n",
    };
    const r = await check({ ...low, ...users }, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("src/low/index.ts: 'c' is exported, but no file of src/ or bench/ outside the folder");
    expect(r.stderr).not.toContain("'b'");
    expect((await check({ ...low, ...users }, ['src/low/index.ts: c', 'src/low/index_more.ts: c'])).code).toBe(0);
  });
});
