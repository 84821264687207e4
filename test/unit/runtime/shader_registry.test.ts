// shader_registry.ts names the WGSL files for the type checker, precompile.ts the entry points the
// backend dispatches; the folder shaders/ is the truth: every file is named once, and every @compute
// function it defines is dispatched, and nothing else.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRY_POINTS } from '../../../src/runtime/gpu/precompile';
import { SHADER_NAMES } from '../../../src/runtime/gpu/shader_registry';
import { REPO_ROOT } from '../../helpers/fixtures';

const DIR = join(REPO_ROOT, 'shaders');
const files = readdirSync(DIR).filter((f) => f.endsWith('.wgsl'));

/** The @compute functions of a WGSL source, in file order. */
const computeFns = (src: string) => [...src.matchAll(/@compute\b[^;{]*?\bfn\s+(\w+)\s*\(/g)].map((m) => m[1]);

describe('SHADER_NAMES', () => {
  it('names every .wgsl file of shaders/ once, and no other', () => {
    expect([...SHADER_NAMES].sort()).toEqual(files.map((f) => f.slice(0, -'.wgsl'.length)).sort());
  });
});

describe('ENTRY_POINTS', () => {
  it("lists each shader's @compute functions, and only those", () => {
    const fromFiles = files.flatMap((f) =>
      computeFns(readFileSync(join(DIR, f), 'utf8')).map((fn) => `${f.slice(0, -'.wgsl'.length)}:${fn}`),
    );
    expect(ENTRY_POINTS.map(([s, e]) => `${s}:${e}`).sort()).toEqual(fromFiles.sort());
  });
});
