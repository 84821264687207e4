#!/usr/bin/env node
// Line-length check for the sources (Biome's linter has no such rule; its formatter would rewrite
// every file). No line over MAX characters in src/, test/, bench/, tools/, bin/. Files that held
// longer lines when the check came in are listed in long_lines.json with their count: such a file
// may only shrink its count, and `--update` writes the lower counts back (it never raises one).
// Usage: node tools/lint/max_line_length.mjs [--update]

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finishBaseline } from './shrinking_baseline.mjs';

const MAX = 120;
// MAX_LINE_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.MAX_LINE_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const DIRS = ['src', 'test', 'bench', 'tools', 'bin'];
const EXT = /\.(ts|tsx|mjs|js)$/;
const BASELINE = process.env.MAX_LINE_ROOT
  ? join(process.env.MAX_LINE_ROOT, 'tools/lint/long_lines.json')
  : fileURLToPath(new URL('./long_lines.json', import.meta.url));

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (EXT.test(e.name)) yield p;
  }
}

/** [line number, length] of each line longer than MAX (length in characters, as an editor counts). */
function longLines(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l, i) => [i + 1, [...l].length])
    .filter(([, n]) => n > MAX);
}

const baseline = JSON.parse(readFileSync(BASELINE, 'utf8'));
const counts = {};
const errors = [];
for (const dir of DIRS.filter((d) => existsSync(join(ROOT, d)))) {
  for (const path of sources(join(ROOT, dir))) {
    const rel = relative(ROOT, path).split('\\').join('/');
    const long = longLines(path);
    if (long.length === 0) continue;
    counts[rel] = long.length;
    const allowed = baseline[rel] ?? 0;
    if (long.length > allowed) {
      const where = long.map(([line, n]) => `${rel}:${line}: ${n} characters`).join('\n  ');
      errors.push(`${rel}: ${long.length} lines over ${MAX} characters (allowed ${allowed}):\n  ${where}`);
    }
  }
}

finishBaseline({
  path: BASELINE,
  baseline,
  measured: counts,
  errors,
  hint: `max line length ${MAX}: shorten these lines (files in long_lines.json may only shrink)`,
  shrunkNote: (n) => `max line length: ${n} file(s) now have fewer long lines; run with --update to lock that in`,
});
