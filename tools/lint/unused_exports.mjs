#!/usr/bin/env node
// Unused-export check (docs/ARCHITECTURE.md §10): knip (knip.json names the entry points) lists
// every export, type export and duplicate export of src/, bench/, test/, tools/ that no other
// file imports. An export only its own file uses is unused as an export: drop the `export`.
// Findings present when the check came in are listed in unused_exports.json; that list only
// shrinks (see baseline.mjs).
// Usage: node tools/lint/unused_exports.mjs [--update] [--list]

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runBaselineCli } from './baseline.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BASELINE = fileURLToPath(new URL('./unused_exports.json', import.meta.url));
const KINDS = ['exports', 'types', 'nsExports', 'nsTypes', 'duplicates'];
const KNIP = fileURLToPath(new URL('../../node_modules/knip/bin/knip.js', import.meta.url));

/** knip's JSON report (it exits 1 when it finds something: that is not a failure here). */
function knipReport() {
  const args = [KNIP, '--include', KINDS.join(','), '--reporter', 'json', '--no-progress', '--no-config-hints'];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`knip did not report (exit ${r.status}):\n${r.stderr || r.stdout}`);
  }
}

/** finding key → message, one per unused export: `unused src/x.ts: name (types)`. */
function findings(report) {
  const found = new Map();
  for (const issue of report.issues) {
    for (const kind of KINDS) {
      for (const item of issue[kind] ?? []) {
        const name = Array.isArray(item) ? item.map((d) => d.name).join(' = ') : item.name;
        const where = item.line ? `${issue.file}:${item.line}` : issue.file;
        const message = `${where}: '${name}' is exported (${kind}) but no other file imports it`;
        found.set(`${issue.file}: ${name} (${kind})`, message);
      }
    }
  }
  return found;
}

const found = findings(knipReport());
runBaselineCli({
  name: 'unused exports',
  found,
  path: BASELINE,
  hint: 'drop the export (or the declaration), or import it where it is meant to be used',
});
