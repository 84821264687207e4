// A baseline of findings a check tolerates for now (they were in the tree when the check came in).
// A finding not in the baseline fails; a baseline entry that is gone is reported, and `--update`
// writes the baseline back without it. The baseline only ever shrinks: --update never adds.

import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Compares `found` (finding key → message) with the keys listed in the JSON array at `path`.
 * Writes the messages of new findings to stderr and returns the exit code (0 pass, 1 fail).
 */
function checkBaseline({ name, found, path, update, hint }) {
  const allowed = new Set(JSON.parse(readFileSync(path, 'utf8')));
  const fresh = [...found.keys()].filter((k) => !allowed.has(k)).sort();
  const gone = [...allowed].filter((k) => !found.has(k));
  if (update) {
    const kept = [...allowed].filter((k) => found.has(k)).sort();
    writeFileSync(path, `${JSON.stringify(kept, null, 1)}\n`);
  } else if (gone.length) {
    process.stdout.write(`${name}: ${gone.length} baselined finding(s) fixed; run with --update to lock that in\n`);
  }
  if (fresh.length === 0) return 0;
  const lines = fresh.map((k) => `  ${found.get(k)}`).join('\n');
  process.stderr.write(`${name}: ${fresh.length} new finding(s):\n${lines}\n${hint}\n`);
  return 1;
}

/** A check's command line: `--list` prints the finding keys, else checkBaseline (`--update` rewrites). */
export function runBaselineCli({ name, found, path, hint }) {
  if (process.argv.includes('--list')) {
    for (const key of [...found.keys()].sort()) process.stdout.write(`${key}\n`);
    return;
  }
  const update = process.argv.includes('--update');
  process.exitCode = checkBaseline({ name, found, path, update, hint });
}
