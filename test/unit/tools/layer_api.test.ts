// tools/lint/layer_api.mjs on a small tree: a name a folder's index.ts exports must be imported by
// src/ or bench/ outside the folder (statically, as `const { a } = await import(...)`, or through a
// sibling entry that re-exports it); a name only tests import fails, naming the entry and the name;
// a baselined finding passes.
import { describe, expect, it } from 'vitest';
import { lintTree } from '../../helpers/lint_tree';

const tree = lintTree('layer_api.mjs', 'LAYER_API_ROOT');
function check(files: Record<string, string>, baseline: string[]) {
  const base = { 'bench/.keep.ts': '', 'test/.keep.ts': '' };
  return tree.run({ ...base, ...files, 'tools/lint/layer_api.json': JSON.stringify(baseline) });
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
