// tools/lint/function_length.mjs on a small tree: a function of 81 physical lines fails (JSX and
// lone braces count, unlike Biome's rule), one of 80 passes, a baselined one may keep (never grow)
// its length, and --update only lowers lengths and drops fixed entries.
import { describe, expect, it } from 'vitest';
import { lintTree } from '../../helpers/lint_tree';

const tree = lintTree('function_length.mjs', 'FUNCTION_LENGTH_ROOT');
const check = (files: Record<string, string>, baseline: Record<string, number>, ...args: string[]) =>
  tree.run({ ...files, 'tools/lint/long_functions.json': JSON.stringify(baseline) }, ...args);

/** A component of `lines` physical lines, mostly JSX, which Biome's rule does not count. */
function component(name: string, lines: number): string {
  const body = Array.from({ length: lines - 4 }, (_, i) => (i % 2 ? '      <br />' : `      {${i}}`));
  const head = [`export function ${name}() {`, '  return (', '    <div>'];
  return [...head, ...body.slice(0, -1), '    </div>);', '}', ''].join('\n');
}

const baselineNow = () => tree.json('tools/lint/long_functions.json');

describe('function_length', () => {
  it('fails a function of 81 physical lines, naming file, line, name and length; passes 80', async () => {
    const files = { 'src/ui/a.tsx': `// a\n${component('Long', 81)}`, 'src/ui/b.tsx': component('Ok', 80) };
    const r = await check(files, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/ui/a.tsx:2: Long is 81 lines (max 80)');
    expect(r.stderr).not.toContain('b.tsx');
    expect((await check({ 'src/ui/b.tsx': component('Ok', 80) }, {})).code).toBe(0);
  });

  it('names an arrow by its variable and a callback by its call, inside its parent', async () => {
    const inner = `export const Outer = () => {\n  useEffect(() => {\n${'    x();\n'.repeat(80)}  });\n};\n`;
    const r = await check({ 'src/a.ts': inner }, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/a.ts:1: Outer is 84 lines');
    expect(r.stderr).toContain('src/a.ts:2: Outer > useEffect callback is 82 lines');
  });

  it('lets a baselined function keep its length, fails when it grows, and --update only lowers it', async () => {
    const key = 'src/a.tsx: Long';
    expect((await check({ 'src/a.tsx': component('Long', 90) }, { [key]: 90 })).code).toBe(0);
    expect((await check({ 'src/a.tsx': component('Long', 91) }, { [key]: 90 })).stderr).toContain('allowed 90');
    const files = { 'src/a.tsx': component('Long', 85), 'src/b.tsx': component('New', 82) };
    const r = await check(files, { [key]: 90, 'src/gone.ts: f': 100 }, '--update');
    expect(r.code).toBe(1);
    expect(baselineNow()).toEqual({ [key]: 85 });
  });
});
