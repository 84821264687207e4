#!/usr/bin/env node
// Layer API check (docs/ARCHITECTURE.md §2): a folder's entries (index.ts, index_<name>.ts) are what
// other layers import, so each name they export must be imported by a file outside the folder, in
// src/ or bench/. A name only tests import is private: the tests import it from its own file (§2
// lets them), and the entry drops it. A name one entry re-exports from another entry of its folder
// (runtime's index_node.ts: `export * from './index'`) is used when either is. Findings present when
// the check came in are listed in layer_api.json; that list only shrinks (see baseline.mjs).
// Usage: node tools/lint/layer_api.mjs [--update] [--list]

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runBaselineCli } from './baseline.mjs';

// LAYER_API_ROOT: another tree to check (the tool's own test points it at a temporary folder)
const ROOT = process.env.LAYER_API_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const BASELINE = join(ROOT, 'tools/lint/layer_api.json');
const USERS = ['src', 'bench']; // the code that may use a layer's API (tests are not users)
const SOURCE = /\.(ts|tsx)$/;
const ENTRY = /^index(_\w+)?\.tsx?$/;

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

/** The file a relative specifier names (`./x` → x.ts, x.tsx or x/index.ts), or undefined. */
function resolveSpecifier(from, spec, files) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec);
  return [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((p) => files.has(p));
}

/** The specifier of `import('x')`, or null. */
function dynamicSpecifier(node) {
  const arg = ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0];
  return arg && ts.isStringLiteral(arg) ? arg.text : null;
}

/** Each import / re-export of a file: the file it names and the names it takes ('*' for all). */
function importsOf(file, files) {
  const out = [];
  const add = (spec, names) => {
    const target = resolveSpecifier(file, spec, files);
    if (target) out.push({ target, names });
  };
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  // `const { a, b } = await import('x')` takes a and b; any other dynamic import, every name
  const visit = (node) => {
    const init = ts.isVariableDeclaration(node) && node.initializer;
    const spec = init && ts.isAwaitExpression(init) ? dynamicSpecifier(init.expression) : null;
    if (spec !== null && ts.isObjectBindingPattern(node.name)) {
      add(
        spec,
        node.name.elements.map((e) => (e.propertyName ?? e.name).text),
      );
      return;
    }
    const any = dynamicSpecifier(node);
    if (any !== null) add(any, ['*']);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  for (const st of sf.statements) {
    const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
    if (spec === null) continue;
    if (ts.isImportDeclaration(st)) {
      const b = st.importClause?.namedBindings;
      if (b && ts.isNamespaceImport(b)) add(spec, ['*']);
      else
        add(
          spec,
          (b?.elements ?? []).map((e) => (e.propertyName ?? e.name).text),
        );
    } else if (ts.isExportDeclaration(st)) {
      const c = st.exportClause;
      add(spec, c && ts.isNamedExports(c) ? c.elements.map((e) => (e.propertyName ?? e.name).text) : ['*']);
    }
  }
  return out;
}

/** entry file → the names it exports (resolved through `export *` by the type checker). */
function entryExports(program, entries) {
  const checker = program.getTypeChecker();
  return new Map(
    entries.map((e) => {
      const sym = checker.getSymbolAtLocation(program.getSourceFile(e));
      return [e, sym ? checker.getExportsOfModule(sym).map((s) => s.name) : []];
    }),
  );
}

/** entry → names used from outside its folder, with re-exports between entries of a folder followed. */
function usedNames(files, entries) {
  const isEntry = new Set(entries);
  const used = new Map(entries.map((e) => [e, new Set()]));
  const between = []; // [from entry, to entry, names]: an entry re-exporting another of its folder
  for (const file of files) {
    const user = USERS.some((u) => file.startsWith(`${join(ROOT, u)}/`));
    for (const { target, names } of importsOf(file, files)) {
      if (!isEntry.has(target)) continue;
      if (isEntry.has(file) && dirname(file) === dirname(target)) between.push([file, target, names]);
      else if (user && !file.startsWith(`${dirname(target)}/`)) for (const n of names) used.get(target).add(n);
    }
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const [from, to, names] of between) {
      const passes = (n) => names[0] === '*' || names.includes(n);
      for (const [a, b] of [
        [from, to],
        [to, from],
      ]) {
        for (const n of [...used.get(a)].filter((x) => x !== '*' && passes(x) && !used.get(b).has(x))) {
          used.get(b).add(n);
          changed = true;
        }
      }
    }
  }
  return used;
}

function findings() {
  const files = new Set(['src', 'bench', 'test'].flatMap((d) => [...sources(join(ROOT, d))]));
  const entries = [...files].filter((f) => f.startsWith(`${join(ROOT, 'src')}/`) && ENTRY.test(f.split('/').pop()));
  // the type checker only resolves what the entries export (through `export *`); imports are read per file
  const program = ts.createProgram(entries, { jsx: ts.JsxEmit.ReactJSX, noEmit: true });
  const used = usedNames(files, entries);
  const found = new Map();
  for (const [entry, names] of entryExports(program, entries)) {
    const u = used.get(entry);
    if (u.has('*')) continue;
    const rel = relative(ROOT, entry);
    for (const n of names.filter((x) => !u.has(x))) {
      const why = 'is exported, but no file of src/ or bench/ outside the folder imports it';
      found.set(`${rel}: ${n}`, `${rel}: '${n}' ${why}`);
    }
  }
  return found;
}

const found = findings();
runBaselineCli({
  name: 'layer API',
  found,
  path: BASELINE,
  hint: 'drop it from the entry; a test imports it from its own file (ARCHITECTURE §2)',
});
