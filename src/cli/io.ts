// Where the CLI writes (stdout/stderr by default, a buffer in tests) and how it reads input files:
// bounded, gzip inflated with a cap (trace/gzip.ts, shared with the app). A regular file is sized
// before it is read; standard input (`-`), /dev/stdin and pipes are read as a stream up to the limit;
// a directory or a device (/dev/zero: endless) is refused before any of it is read.

import { closeSync, createReadStream, fstatSync, openSync, readSync, statSync } from 'node:fs';
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

/** The name standard input goes by where a file is expected. */
export const STDIN = '-';

/** Up to limit + 1 bytes of a stream (a pipe, standard input), refused past `limit` (it may never end). */
async function readStream(path: string, what: string, limit: number): Promise<Uint8Array> {
  const name = path === STDIN ? 'standard input' : `'${path}'`;
  const chunks: Buffer[] = [];
  let n = 0;
  const stream = path === STDIN ? createReadStream('', { fd: 0, autoClose: false }) : createReadStream(path);
  try {
    for await (const c of stream as AsyncIterable<Buffer>) {
      chunks.push(c);
      n += c.length;
      if (n > limit) {
        const over = `holds more than the ${mibText(limit, 0)} input limit (${MAX_INPUT_ENV} sets it); not read`;
        throw new ImportError(path, `${what}${name} ${over}`);
      }
    }
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(path, `${what}cannot read ${name}: ${code(e)}`);
  } finally {
    if (path !== STDIN) stream.destroy();
  }
  return Buffer.concat(chunks, n);
}

/**
 * A regular file's bytes, refused before reading when it is a directory or a device or holds more
 * than `limit`; undefined for a pipe or socket (read as a stream).
 */
function readBounded(path: string, what: string, limit: number): Uint8Array | undefined {
  const notFile = (kind = 'a directory or device') =>
    new ImportError(path, `${what}cannot read '${path}': not a regular file or pipe (${kind})`);
  let fd: number;
  try {
    // stat before open: a pipe is read as a stream (readStream), never sized
    const st = statSync(path);
    if (st.isFIFO() || st.isSocket()) return undefined;
    if (!st.isFile()) throw notFile(st.isDirectory() ? 'a directory' : 'a device');
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
export async function readInputText(path: string, what = '', limit = inputLimit(), strict = false): Promise<string> {
  const bytes = (path === STDIN ? undefined : readBounded(path, what, limit)) ?? (await readStream(path, what, limit));
  return traceText(path === STDIN ? 'standard input' : path, bytes, limit, strict);
}

/** Standard input read once: `-` named twice among the inputs is a usage error. */
export function stdinOnce(command: string, paths: readonly (string | undefined)[]): void {
  if (paths.filter((p) => p === STDIN).length > 1)
    throw new UsageError(`fsdp-sim ${command}: '-' (standard input) can be read once; give files for the other inputs`);
}
