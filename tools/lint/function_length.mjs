#!/usr/bin/env node
// Function length check for src/ (docs/ARCHITECTURE.md §10): no function over MAX physical lines,
// counted from its first line to its last, JSX, blank lines, comments and lone braces included
// (Biome's noExcessiveLinesPerFunction skips JSX and brace-only lines: a 168-line component
// counted as 76). Function-like nodes are found with the TypeScript compiler API; a nested
// function counts on its own and inside its parent. Functions over MAX when the check came in are
// listed in long_functions.json ("file: name" → lines): such a function may only shrink, and
// `--update` writes the lower lengths back and drops the ones now within MAX (it never adds one).
// Usage: node tools/lint/function_length.mjs [--update]

import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { finishBaseline } from './shrinking_baseline.mjs';

const MAX = 80;
// FUNCTION_LENGTH_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.FUNCTION_LENGTH_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const BASELINE = join(ROOT, 'tools/lint/long_functions.json');
const SOURCE = /\.(ts|tsx)$/;

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) yield p;
  }
}

const isFunction = (n) =>
  (ts.isFunctionDeclaration(n) ||
    ts.isFunctionExpression(n) ||
    ts.isArrowFunction(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n)) &&
  n.body !== undefined;

/** A readable, line-independent name: its own, its variable's or property's, or the call it is passed to. */
function ownName(node, file) {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(file);
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) {
    return p.name.getText(file);
  }
  if (ts.isCallExpression(p) || ts.isNewExpression(p)) {
    const callee = p.expression;
    const text = ts.isPropertyAccessExpression(callee) ? `.${callee.name.text}` : callee.getText(file);
    return `${text.length > 40 ? '(call)' : text} callback`;
  }
  if (ts.isJsxExpression(p) && ts.isJsxAttribute(p.parent)) return p.parent.name.getText(file);
  return '(anonymous)';
}

/** The functions of one file over MAX lines: [name, first line, lines]; a nested one is named inside its parent's. */
function longFunctions(path) {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = [];
  const seen = new Map();
  const visit = (node, outer) => {
    let inner = outer;
    if (isFunction(node) || ts.isClassDeclaration(node)) {
      const own = ts.isClassDeclaration(node) ? (node.name?.text ?? '(class)') : ownName(node, file);
      inner = outer ? `${outer} > ${own}` : own;
    }
    if (isFunction(node)) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const n = (seen.get(inner) ?? 0) + 1;
      seen.set(inner, n);
      const name = n === 1 ? inner : `${inner} #${n}`;
      if (last - first + 1 > MAX) out.push([name, first, last - first + 1]);
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(file, '');
  return out;
}

const baseline = JSON.parse(readFileSync(BASELINE, 'utf8'));
const lengths = {};
const errors = [];
for (const path of sources(join(ROOT, 'src'))) {
  const rel = relative(ROOT, path).split('\\').join('/');
  for (const [name, line, lines] of longFunctions(path)) {
    const key = `${rel}: ${name}`;
    lengths[key] = lines;
    const allowed = baseline[key];
    if (allowed === undefined || lines > allowed) {
      const limit = allowed === undefined ? `max ${MAX}` : `allowed ${allowed}, baselined`;
      errors.push(`${rel}:${line}: ${name} is ${lines} lines (${limit})`);
    }
  }
}

finishBaseline({
  path: BASELINE,
  baseline,
  measured: lengths,
  errors,
  hint: `function length ${MAX}: split these functions (those in long_functions.json may only shrink)`,
  shrunkNote: (n) => `function length: ${n} function(s) now shorter; run with --update to lock that in`,
});
