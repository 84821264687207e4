// Where the CLI writes (stdout/stderr by default, a buffer in tests) and how it reads input files:
// bounded, regular files only, gzip inflated with a cap (trace/gzip.ts, shared with the app).

import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { ImportError } from '../errors';
import { MAX_TRACE_BYTES, traceText } from '../trace';
import { mibText } from '../util';
import { UsageError } from './flags';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (t) => void process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => void process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
};

/** Env var that sets the input limit in MiB (lower it on a small machine; it cannot pass MAX_TRACE_BYTES). */
const MAX_INPUT_ENV = 'FSDP_SIM_MAX_INPUT_MIB';

/** The input limit in bytes: $FSDP_SIM_MAX_INPUT_MIB, else MAX_TRACE_BYTES (a bad value is a usage error). */
export function inputLimit(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const text = env[MAX_INPUT_ENV];
  if (text === undefined || text === '') return MAX_TRACE_BYTES;
  const mib = Number(text);
  const max = MAX_TRACE_BYTES / 2 ** 20;
  if (!(mib > 0 && mib <= max))
    throw new UsageError(
      `${MAX_INPUT_ENV} must be a number of MiB in (0, ${max}] (JavaScript's longest string), got '${text}'`,
    );
  return Math.floor(mib * 2 ** 20);
}

const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** A regular file's bytes, refused before reading when it is not a regular file or holds more than `limit`. */
function readBounded(path: string, what: string, limit: number): Uint8Array {
  const notFile = () =>
    new ImportError(path, `${what}cannot read '${path}': not a regular file (a directory, device or pipe)`);
  let fd: number;
  try {
    // stat before open: opening a FIFO waits for a writer
    if (!statSync(path).isFile()) throw notFile();
    fd = openSync(path, 'r');
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(path, `${what}cannot read '${path}': ${code(e)}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notFile();
    if (st.size > limit) {
      const sizes = `${mibText(st.size)}, over the ${mibText(limit, 0)} input limit`;
      throw new ImportError(path, `${what}'${path}' is ${sizes} (${MAX_INPUT_ENV} sets the limit); not read`);
    }
    // at most limit + 1 bytes even if the file grows after the check
    const buf = Buffer.allocUnsafe(Math.min(st.size, limit) + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > limit) throw new ImportError(path, `${what}'${path}' grew past the ${limit}-byte input limit while read`);
    return buf.subarray(0, n);
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(path, `${what}cannot read '${path}': ${code(e)}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of an input file, as the app reads one: gzip known by its magic bytes and inflated with
 * the same cap, a UTF-8 BOM dropped. `what` prefixes messages (`--fx-graph `). One reader for
 * analyze, calibrate and pass.
 */
export async function readInputText(path: string, what = '', limit = inputLimit()): Promise<string> {
  const bytes = readBounded(path, what, limit);
  return traceText(path, bytes, limit);
}
