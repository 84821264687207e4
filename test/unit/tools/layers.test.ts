// tools/lint/layers.mjs on a small tree: the layer table of docs/ARCHITECTURE.md §2 is the rule,
// an import against it or past a folder's index.ts fails naming both files, a baselined finding
// passes, and --update only removes entries.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const TOOL = fileURLToPath(new URL('../../../tools/lint/layers.mjs', import.meta.url));
const DOC = [
  '# map', '## 2. Layers', '| layer | what | may import |', '|---|---|---|',
  '| `errors` | errors | — (below every layer) |', '| `low` | bottom | — |', '| `high` | top | `low` |',
  '## 3. Next', '',
].join('\n');
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function check(files: Record<string, string>, baseline: string[], ...args: string[]) {
  root = mkdtempSync(join(tmpdir(), 'layers-'));
  const tree = { 'docs/ARCHITECTURE.md': DOC, 'src/errors.ts': 'export const E = 1;\n', ...files };
  for (const [p, text] of Object.entries(tree)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  mkdirSync(join(root, 'tools/lint'), { recursive: true });
  writeFileSync(join(root, 'tools/lint/layers.json'), JSON.stringify(baseline));
  try {
    const env = { ...process.env, LAYERS_ROOT: root };
    const r = await promisify(execFile)(process.execPath, [TOOL, ...args], { env });
    return { code: 0, ...r };
  } catch (e) {
    return e as { code: number; stdout: string; stderr: string };
  }
}

const low = { 'src/low/index.ts': "export { x } from './x';\n", 'src/low/x.ts': 'export const x = 1;\n' };
const baselineNow = () => JSON.parse(readFileSync(join(root, 'tools/lint/layers.json'), 'utf8'));

describe('layers', () => {
  it('passes imports down the table through index.ts, and errors from anywhere', async () => {
    const high = "import { x } from '../low';\nimport { E } from '../errors';\nexport const y = x + E;\n";
    expect((await check({ ...low, 'src/high/a.ts': high }, [])).code).toBe(0);
  });

  it('fails an import up the table, naming both files and layers', async () => {
    const up = { 'src/high/index.ts': 'export const h = 1;\n', 'src/low/y.ts': "import '../high';\n" };
    const r = await check({ ...low, ...up }, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("src/low/y.ts imports src/high/index.ts: 'low' may not import 'high'");
  });

  it('fails an import past a folder index.ts, and a folder the table does not list', async () => {
    const bad = { 'src/high/a.ts': "import { x } from '../low/x';\n", 'src/odd/b.ts': "import '../low';\n" };
    const r = await check({ ...low, ...bad }, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/high/a.ts imports src/low/x.ts past src/low/index.ts');
    expect(r.stderr).toContain("src/odd/b.ts: 'odd' is not a layer");
  });

  it('lets a baselined finding pass, and --update drops fixed entries without adding new ones', async () => {
    const deep = 'deep src/high/a.ts -> src/low/x.ts';
    const files = { ...low, 'src/high/a.ts': "import { x } from '../low/x';\n" };
    expect((await check(files, [deep])).code).toBe(0);
    const clean = { ...low, 'src/high/a.ts': "import { x } from '../low';\n" };
    const fixed = await check(clean, [deep, 'deep gone'], '--update');
    expect(fixed.code).toBe(0);
    expect(baselineNow()).toEqual([]);
    expect((await check(files, [], '--update')).code).toBe(1);
    expect(baselineNow()).toEqual([]);
  });
});
