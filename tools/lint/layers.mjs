#!/usr/bin/env node
// Layer check for src/ (docs/ARCHITECTURE.md, section 2 "Layers"). The tables in that section are
// the rule. The layer table: each folder of src/ (and each file directly in src/, by its stem) may
// import only the layers its row lists, plus those whose row says "below every layer". The package
// table: a package (or `node:*`) may be imported only by the layers its row lists; a package it
// does not list is imported nowhere. An import from outside a folder goes through the folder's
// entry, never past it: a layer's index.ts (or an index_<name>.ts beside it), and the same for a
// sub-folder that has an index.ts (a sub-folder without one is part of its parent). WebGPU (the
// API's calls and constants, navigator.gpu, GPU* types, the `webgpu` package) appears only under
// src/runtime/gpu/. Findings present when the check came in are listed in layers.json; that list
// only shrinks (see baseline.mjs).
// Usage: node tools/lint/layers.mjs [--update] [--list] [--graph]

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runBaselineCli } from './baseline.mjs';

// LAYERS_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.LAYERS_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const DOC = 'docs/ARCHITECTURE.md';
const BASELINE = join(ROOT, 'tools/lint/layers.json');
const SOURCE = /\.(ts|tsx)$/;
// a folder's entries: index.ts, and index_<name>.ts for a narrower or a Node-only load
const ENTRY = /^index(_\w+)?\.tsx?$/;
const GPU_DIR = join(SRC, 'runtime', 'gpu');
// WebGPU values: the API's constant namespaces, and the calls on its objects (as `x.name(...)`)
const GPU_VALUES = new Set(['GPUBufferUsage', 'GPUShaderStage', 'GPUMapMode', 'GPUTextureUsage', 'GPUColorWrite']);
const GPU_CALLS = new Set([
  'requestAdapter',
  'requestDevice',
  'createBuffer',
  'createComputePipeline',
  'createComputePipelineAsync',
  'createShaderModule',
  'createBindGroup',
  'createBindGroupLayout',
  'createPipelineLayout',
  'createCommandEncoder',
  'beginComputePass',
  'dispatchWorkgroups',
  'mapAsync',
  'getMappedRange',
  'writeBuffer',
  'createQuerySet',
  'resolveQuerySet',
]);

/** The rows of each table of a markdown section, by the first cell of its header row. */
function tables(section) {
  const out = new Map();
  let rows = null;
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) rows = null;
    else if (rows === null) out.set(line.split('|')[1].trim(), (rows = []));
    else if (!/^\|[-| ]+\|$/.test(line))
      rows.push(
        line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );
  }
  return out;
}

/**
 * From the DOC's "2. Layers" section: layers (layer → Set of layers it may import) and packages
 * (package, or `node:*`, → Set of layers that may import it).
 */
function readRules(markdown) {
  const section = markdown.split(/^## /m).find((s) => /^2\. Layers/.test(s));
  if (!section) throw new Error(`${DOC} has no "## 2. Layers" section`);
  const t = tables(section);
  const layers = new Map();
  const below = [];
  for (const cells of t.get('layer') ?? []) {
    const name = /^`(\w+)`$/.exec(cells[0])?.[1];
    if (!name) continue;
    layers.set(name, new Set([...cells.at(-1).matchAll(/`(\w+)`/g)].map((m) => m[1])));
    if (cells.at(-1).includes('below every layer')) below.push(name);
  }
  if (layers.size === 0) throw new Error(`${DOC} section 2 has no layer table`);
  for (const [name, may] of layers) for (const b of below) if (b !== name) may.add(b);
  const packages = new Map();
  for (const cells of t.get('package') ?? []) {
    // the packages: the backticked names outside parentheses of the first cell
    const by = new Set([...cells.at(-1).matchAll(/`(\w+)`/g)].map((m) => m[1]));
    for (const m of cells[0].replace(/\(.*?\)/g, '').matchAll(/`([^`]+)`/g)) packages.set(m[1], by);
  }
  return { layers, packages };
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

/**
 * A deep import: `target` past the entry of the outermost folder that holds it and not `from`
 * (a layer, or a sub-folder with an index.ts), or nothing.
 */
function deepImport(from, target) {
  const parts = relative(SRC, target).split(/[\\/]/);
  for (let depth = 1; depth < parts.length; depth++) {
    const dir = join(SRC, ...parts.slice(0, depth));
    if (depth > 1 && !existsSync(join(dir, 'index.ts'))) continue;
    if (!relative(dir, from).startsWith('..')) continue;
    if (depth === parts.length - 1 && ENTRY.test(parts[depth])) return [];
    const folder = `src/${parts.slice(0, depth).join('/')}`;
    return [[`deep ${rel(from)} -> ${rel(target)}`, `${rel(from)} imports ${rel(target)} past ${folder}/index.ts`]];
  }
  return [];
}

/** The findings of one import: a layer break, a deep import, or nothing. */
function judge(layers, from, target) {
  const a = layerOf(from);
  const b = layerOf(target);
  const found = deepImport(from, target);
  if (a === b) return found;
  const allowed = layers.get(a);
  if (!allowed) found.push([`layer ${rel(from)}`, `${rel(from)}: '${a}' is not a layer in ${DOC} section 2`]);
  else if (!allowed.has(b)) {
    const message = `${rel(from)} imports ${rel(target)}: '${a}' may not import '${b}'`;
    found.push([`layer ${rel(from)} -> ${rel(target)}`, message]);
  }
  return found;
}

/** The package table's row for a bare specifier: the longest entry naming it or a folder above it. */
function packageRow(packages, spec) {
  const names = [...packages.keys()].filter((p) =>
    p.endsWith('*') ? spec.startsWith(p.slice(0, -1)) : spec === p || spec.startsWith(`${p}/`),
  );
  return names.sort((x, y) => y.length - x.length)[0];
}

/** The findings of one package import: a layer the package table does not list, or an unlisted package. */
function judgePackage(packages, from, spec) {
  const row = packageRow(packages, spec);
  const key = `package ${rel(from)} -> ${spec}`;
  if (row === undefined) {
    return [[key, `${rel(from)} imports '${spec}', which the package table of ${DOC} section 2 does not list`]];
  }
  if (packages.get(row).has(layerOf(from))) return [];
  const may = [...packages.get(row)].join(', ');
  return [[key, `${rel(from)} imports '${spec}': only ${may} may import '${row}'`]];
}

/** WebGPU outside src/runtime/gpu/: the findings of one file, one per token. */
function webGpuUses(path) {
  if (!relative(GPU_DIR, path).startsWith('..')) return [];
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = new Map();
  const add = (node, token) => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    const message = `${rel(path)}:${line}: ${token} outside src/runtime/gpu/ (only runtime/gpu touches WebGPU)`;
    if (!found.has(token)) found.set(token, [`webgpu ${rel(path)}: ${token}`, message]);
  };
  const visit = (node) => {
    if (ts.isIdentifier(node) && GPU_VALUES.has(node.text)) add(node, node.text);
    else if (ts.isPropertyAccessExpression(node)) {
      const name = node.name.text;
      if (GPU_CALLS.has(name)) add(node, `.${name}`);
      if (name === 'gpu' && /(^|\.)navigator$/.test(node.expression.getText(file))) add(node, 'navigator.gpu');
    } else if (ts.isTypeReferenceNode(node) && /^GPU([A-Z]\w*)?$/.test(node.typeName.getText(file))) {
      add(node, `type ${node.typeName.getText(file)}`);
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword) {
      if (ts.isStringLiteral(node.left) && node.left.text === 'gpu') add(node, "'gpu' in");
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  for (const spec of specifiers(path))
    if (spec === 'webgpu' || spec.startsWith('webgpu/')) {
      found.set(spec, [`webgpu ${rel(path)}: '${spec}'`, `${rel(path)} imports '${spec}' outside src/runtime/gpu/`]);
    }
  return [...found.values()];
}

function findings() {
  const { layers, packages } = readRules(readFileSync(join(ROOT, DOC), 'utf8'));
  const found = new Map();
  const edges = new Map();
  for (const from of sources(SRC)) {
    for (const [key, message] of webGpuUses(from)) found.set(key, message);
    for (const spec of specifiers(from)) {
      if (!spec.startsWith('.')) {
        for (const [key, message] of judgePackage(packages, from, spec)) found.set(key, message);
        continue;
      }
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
} else {
  const hint =
    `import through the folder's index.ts (export the name there), from the layers and packages ${DOC} ` +
    'section 2 allows; WebGPU stays in src/runtime/gpu/';
  runBaselineCli({ name: 'layers', found, path: BASELINE, hint });
}
