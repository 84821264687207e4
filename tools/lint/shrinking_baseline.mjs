// The ending both counted checks share (max_line_length.mjs, function_length.mjs): a baseline JSON of
// counts that may only shrink. `--update` writes the lower counts back and never adds or raises one;
// errors fail the run with a hint; counts below their baseline are noted.

import { writeFileSync } from 'node:fs';

/**
 * Write the lowered baseline when asked, then report. `measured` holds this run's count per key;
 * `errors` what already broke the rule; `hint` and `shrunkNote(n)` word the two outcomes.
 */
export function finishBaseline({ path, baseline, measured, errors, hint, shrunkNote }) {
  const update = process.argv.includes('--update');
  if (update) {
    const next = Object.fromEntries(
      Object.keys(baseline)
        .filter((k) => measured[k] !== undefined)
        .sort()
        .map((k) => [k, Math.min(measured[k], baseline[k])]),
    );
    writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`);
  }
  if (errors.length) {
    process.stderr.write(`${errors.join('\n')}\n${hint}\n`);
    process.exit(1);
  }
  const shrunk = Object.keys(baseline).filter((k) => (measured[k] ?? 0) < baseline[k]);
  if (shrunk.length && !update) process.stdout.write(`${shrunkNote(shrunk.length)}\n`);
}
