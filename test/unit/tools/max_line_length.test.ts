// tools/lint/max_line_length.mjs: fails on a line over 120 characters, names file and line, and lets
// a file listed in the baseline keep (never grow) its count.
import { describe, expect, it } from 'vitest';
import { lintTree } from '../../helpers/lint_tree';

const tree = lintTree('max_line_length.mjs', 'MAX_LINE_ROOT');
const check = (files: Record<string, string>, baseline: Record<string, number>, ...args: string[]) =>
  tree.run({ ...files, 'tools/lint/long_lines.json': JSON.stringify(baseline) }, ...args);

const long = `const x = '${'a'.repeat(120)}';\n`; // 133 characters
const ok = 'const y = 1;\n';

describe('max_line_length', () => {
  it('fails naming the file, line and length of a line over 120 characters', async () => {
    const r = await check({ 'src/a.ts': ok + long, 'test/b.ts': ok }, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/a.ts:2: 133 characters');
    expect(r.stderr).not.toContain('test/b.ts');
  });

  it('counts characters, not UTF-8 bytes, and passes a clean tree', async () => {
    expect((await check({ 'src/a.ts': `// ${'µ'.repeat(117)}\n` }, {})).code).toBe(0);
  });

  it('lets a baseline file keep its count, fails when it grows, and --update only lowers it', async () => {
    expect((await check({ 'src/a.ts': long }, { 'src/a.ts': 1 })).code).toBe(0);
    expect((await check({ 'src/a.ts': long + long }, { 'src/a.ts': 1 })).code).toBe(1);
    const r = await check({ 'src/a.ts': ok, 'src/c.ts': long }, { 'src/a.ts': 2, 'src/c.ts': 3 }, '--update');
    expect(tree.json('tools/lint/long_lines.json')).toEqual({ 'src/c.ts': 1 });
    expect(r.code).toBe(0);
  });
});
