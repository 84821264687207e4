#!/usr/bin/env node
// Distinct file names in src/ (docs/ARCHITECTURE.md §10): no two source files share a stem, so a
// name in an import, a stack trace or a search result says which file it is. A folder's index.ts
// is the exception (the layer rule requires one per folder). Worker entries are named one way:
// `<name>.worker.ts`.
// Usage: node tools/lint/stems.mjs

import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// STEMS_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.STEMS_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const SOURCE = /\.(ts|tsx)$/;

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (SOURCE.test(e.name)) yield relative(ROOT, p).split('\\').join('/');
  }
}

const byStem = new Map();
const errors = [];
for (const path of sources(SRC)) {
  const name = path.split('/').at(-1);
  if (/worker/i.test(name) && !/^[a-z0-9_]+\.worker\.tsx?$/.test(name)) {
    errors.push(`${path}: a worker entry is named <name>.worker.ts`);
  }
  const stem = name.replace(SOURCE, '');
  if (stem === 'index') continue;
  (byStem.get(stem) ?? byStem.set(stem, []).get(stem)).push(path);
}
for (const [stem, paths] of byStem) {
  if (paths.length > 1) errors.push(`stem '${stem}' is used by ${paths.length} files: ${paths.join(', ')}`);
}
if (errors.length > 0) {
  process.stderr.write(`${errors.join('\n')}\nname each source file distinctly (docs/ARCHITECTURE.md §10)\n`);
  process.exitCode = 1;
}
