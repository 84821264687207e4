// The CLI run in process, for every test that runs a command: main() with a buffered Io, so no
// test reads another's output; and temporary folders that are removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { main } from '../../src/cli/cli';

export interface CliRun {
  readonly code: number;
  /** What the command printed on stdout, lines joined by '\n'. */
  readonly out: string;
  /** What it printed on stderr, lines joined by '\n'. */
  readonly err: string;
}

/** `fsdp-sim ARGS...` in process: its exit code and its stdout / stderr. */
export async function cli(args: readonly string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A maker of fresh temporary folders named `<prefix>XXXXXX`, each removed after the test that made it. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
