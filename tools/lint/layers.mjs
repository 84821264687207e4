#!/usr/bin/env node
// Layer check for src/ (docs/ARCHITECTURE.md, section 2 "Layers"). The table in that section is
// the rule: each folder of src/ (and each file directly in src/, by its stem) may import only the
// layers its row lists, plus those whose row says "below every layer". An import from outside a
// folder goes through the folder's index.ts, never past it. Findings present when the check came
// in are listed in layers.json; that list only shrinks (see baseline.mjs).
// Usage: node tools/lint/layers.mjs [--update] [--list] [--graph]

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { checkBaseline } from './baseline.mjs';

// LAYERS_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.LAYERS_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const DOC = 'docs/ARCHITECTURE.md';
const BASELINE = join(ROOT, 'tools/lint/layers.json');
const SOURCE = /\.(ts|tsx)$/;

/** Map layer → Set of layers it may import, read from the DOC's "2. Layers" table. */
function readLayers(markdown) {
  const section = markdown.split(/^## /m).find((s) => /^2\. Layers/.test(s));
  if (!section) throw new Error(`${DOC} has no "## 2. Layers" section`);
  const layers = new Map();
  const below = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(\w+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name || cells.length < 5) continue;
    layers.set(name, new Set([...cells.at(-2).matchAll(/`(\w+)`/g)].map((m) => m[1])));
    if (cells.at(-2).includes('below every layer')) below.push(name);
  }
  if (layers.size === 0) throw new Error(`${DOC} section 2 has no layer table`);
  for (const [name, may] of layers) for (const b of below) if (b !== name) may.add(b);
  return layers;
}

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (SOURCE.test(e.name)) yield p;
  }
}

/** A file's layer: its top folder under src/, or its stem for a file directly in src/. */
function layerOf(path) {
  const parts = relative(SRC, path).split(/[\\/]/);
  return parts.length === 1 ? parts[0].replace(/\.\w+$/, '') : parts[0];
}

/** The file a relative specifier names (as Vite and tsc resolve it), or undefined. */
function resolveSpecifier(from, spec) {
  const base = resolve(dirname(from), spec.replace(/\?.*$/, ''));
  const tries = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')];
  return tries.find((p) => existsSync(p) && statSync(p).isFile());
}

/** Every module specifier in a file: static imports, re-exports, import() calls. */
function specifiers(path) {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node) => {
    const dynamic = ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword;
    const spec = node.moduleSpecifier ?? (dynamic ? node.arguments[0] : undefined);
    if (spec && ts.isStringLiteral(spec)) out.push(spec.text);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

const rel = (p) => relative(ROOT, p).split('\\').join('/');

/** The findings of one import: a layer break, a deep import, or nothing. */
function judge(layers, from, target) {
  const a = layerOf(from);
  const b = layerOf(target);
  if (a === b) return [];
  const found = [];
  const allowed = layers.get(a);
  if (!allowed) found.push([`layer ${rel(from)}`, `${rel(from)}: '${a}' is not a layer in ${DOC} section 2`]);
  else if (!allowed.has(b)) {
    const message = `${rel(from)} imports ${rel(target)}: '${a}' may not import '${b}'`;
    found.push([`layer ${rel(from)} -> ${rel(target)}`, message]);
  }
  const inFolder = relative(join(SRC, b), target).split(/[\\/]/);
  // index_node.ts: a layer's Node-only entry (node: modules the page must not load)
  const viaIndex = inFolder.length === 1 && /^index(_node)?\.tsx?$/.test(inFolder[0]);
  if (relative(SRC, target).includes('/') && !viaIndex) {
    found.push([`deep ${rel(from)} -> ${rel(target)}`, `${rel(from)} imports ${rel(target)} past src/${b}/index.ts`]);
  }
  return found;
}

function findings() {
  const layers = readLayers(readFileSync(join(ROOT, DOC), 'utf8'));
  const found = new Map();
  const edges = new Map();
  for (const from of sources(SRC)) {
    for (const spec of specifiers(from).filter((s) => s.startsWith('.'))) {
      const target = resolveSpecifier(from, spec);
      if (!target || relative(SRC, target).startsWith('..')) continue;
      const edge = `${layerOf(from)} -> ${layerOf(target)}`;
      if (layerOf(from) !== layerOf(target)) edges.set(edge, (edges.get(edge) ?? 0) + 1);
      for (const [key, message] of judge(layers, from, target)) found.set(key, message);
    }
  }
  return { found, edges };
}

const { found, edges } = findings();
if (process.argv.includes('--graph')) {
  for (const [edge, n] of [...edges].sort()) process.stdout.write(`${edge} ${n}\n`);
} else if (process.argv.includes('--list')) {
  for (const key of [...found.keys()].sort()) process.stdout.write(`${key}\n`);
} else {
  const hint = `import through the folder's index.ts (export the name there), from the layers ${DOC} section 2 allows`;
  const update = process.argv.includes('--update');
  process.exitCode = checkBaseline({ name: 'layers', found, path: BASELINE, update, hint });
}
