// tools/lint/stems.mjs: fails when two source files in src/ share a stem (index.ts excepted) or a
// worker entry is not named <name>.worker.ts, naming the files.
import { describe, expect, it } from 'vitest';
import { lintTree } from '../../helpers/lint_tree';

const tree = lintTree('stems.mjs', 'STEMS_ROOT');
const check = (paths: string[]) => tree.run(Object.fromEntries(paths.map((p) => [p, 'export {};\n'])));

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
