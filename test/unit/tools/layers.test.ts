// tools/lint/layers.mjs on a small tree: the layer and package tables of docs/ARCHITECTURE.md §2
// are the rule, an import against them or past a folder's (or a sub-folder's) index.ts fails
// naming both files, WebGPU outside src/runtime/gpu/ fails, a baselined finding passes, and
// --update only removes entries.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lintTree } from '../../helpers/lint_tree';

const REAL_DOC = readFileSync(new URL('../../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
const DOC = [
  '# map',
  '## 2. Layers',
  '| layer | what | may import |',
  '|---|---|---|',
  '| `errors` | errors | — (below every layer) |',
  '| `low` | bottom | — |',
  '| `high` | top | `low` |',
  '| `runtime` | gpu | `low` |',
  '',
  '| package | imported only by |',
  '|---|---|',
  '| `react` (the `useState` hook) | `high` |',
  '| `node:*` | `low` |',
  '## 3. Next',
  '',
].join('\n');

const tree = lintTree('layers.mjs', 'LAYERS_ROOT');
function check(files: Record<string, string>, baseline: string[], ...args: string[]) {
  const base = { 'docs/ARCHITECTURE.md': DOC, 'src/errors.ts': 'export const E = 1;\n' };
  return tree.run({ ...base, ...files, 'tools/lint/layers.json': JSON.stringify(baseline) }, ...args);
}

const low = { 'src/low/index.ts': "export { x } from './x';\n", 'src/low/x.ts': 'export const x = 1;\n' };
const baselineNow = () => tree.json('tools/lint/layers.json');

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

  it('fails a package import the package table does not allow, and a package it does not list', async () => {
    const files = {
      ...low,
      'src/high/ui.ts': "import { useState } from 'react';\nexport const u = useState;\n",
      'src/low/store.ts':
        "import { useState } from 'react';\nimport { join } from 'node:path';\n" +
        'export const s = [useState, join];\n',
      'src/low/d.ts': "import { max } from 'd3';\nexport const m = max;\n",
    };
    const r = await check(files, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("src/low/store.ts imports 'react': only high may import 'react'");
    expect(r.stderr).toContain("src/low/d.ts imports 'd3', which the package table");
    expect(r.stderr).not.toContain('src/high/ui.ts');
    expect(r.stderr).not.toContain('node:path');
    expect(r.stderr).not.toContain('useState');
  });

  it('fails WebGPU outside src/runtime/gpu/: a call, a constant, navigator.gpu, a GPU type', async () => {
    const gpu = [
      'export async function f(d: GPUDevice) {',
      '  const a = await navigator.gpu.requestAdapter();',
      '  return [a, d.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE })];',
      '}',
      '',
    ].join('\n');
    const ok = { ...low, 'src/runtime/gpu/index.ts': gpu, 'src/runtime/rank.ts': "import '../low';\n" };
    expect((await check(ok, [])).code).toBe(0);
    const r = await check({ ...ok, 'src/runtime/rank.ts': gpu }, []);
    expect(r.code).toBe(1);
    for (const token of ['type GPUDevice', 'navigator.gpu', '.requestAdapter', '.createBuffer', 'GPUBufferUsage']) {
      expect(r.stderr).toContain(`${token} outside src/runtime/gpu/`);
    }
    expect(r.stderr).toContain('src/runtime/rank.ts:2: navigator.gpu');
  });

  it('fails an import past a sub-folder index.ts; its entries and a sub-folder without one pass', async () => {
    const tree = {
      ...low,
      'src/low/sub/index.ts': "export { y } from './y';\n",
      'src/low/sub/index_probe.ts': "export { y } from './y';\n",
      'src/low/sub/y.ts': "import { x } from '../x';\nexport const y = x;\n",
      'src/low/open/w.ts': 'export const w = 1;\n',
      'src/low/a.ts':
        "import { y } from './sub';\nimport { y as p } from './sub/index_probe';\n" +
        "import { w } from './open/w';\nexport const a = [y, p, w];\n",
    };
    expect((await check(tree, [])).code).toBe(0);
    const r = await check({ ...tree, 'src/low/b.ts': "import { y } from './sub/y';\nexport const b = y;\n" }, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('src/low/b.ts imports src/low/sub/y.ts past src/low/sub/index.ts');
  });

  it("with the real table: React or zustand's React binding in store/ fails, zustand/vanilla passes", async () => {
    const files = {
      'docs/ARCHITECTURE.md': REAL_DOC,
      'src/store/index.ts': "export { useStore } from 'zustand';\nexport { createStore } from 'zustand/vanilla';\n",
      'src/store/hook.ts': "import { useState } from 'react';\nexport const h = useState;\n",
      'src/ui/use_app.ts':
        "import { useStore } from 'zustand';\nimport { useState } from 'react';\n" +
        'export const u = [useStore, useState];\n',
    };
    const r = await check(files, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("src/store/hook.ts imports 'react': only ui, main may import 'react'");
    expect(r.stderr).toContain("src/store/index.ts imports 'zustand': only ui may import 'zustand'");
    expect(r.stderr).not.toContain('zustand/vanilla');
    expect(r.stderr).not.toContain('src/ui/');
  });
});
