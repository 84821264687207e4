// Trace files for analyze and calibrate, read as streams (trace/trace_stream.ts): a regular file
// opened as io.ts opens one (same messages), read in chunks, never whole; memory holds the events
// kept, not the file. No cap on a file's size; FSDP_SIM_MAX_INPUT_MIB, when set, still caps each
// file's text. The events kept over all files are bounded by FSDP_SIM_MAX_KEPT_EVENTS.

import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { ImportError } from '../errors';
import { type Keep, type KeptBudget, keptBudget, MAX_KEPT_EVENTS, readTraceStream } from '../trace';
import { UsageError } from './flags';
import { inputLimit, STDIN } from './io';

const KEPT_ENV = 'FSDP_SIM_MAX_KEPT_EVENTS';
const CHUNK = 4 * 2 ** 20;

const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** The budget on kept events: $FSDP_SIM_MAX_KEPT_EVENTS, else MAX_KEPT_EVENTS (a bad value is a usage error). */
export function keptEventsBudget(env: Readonly<Record<string, string | undefined>> = process.env): KeptBudget {
  const text = env[KEPT_ENV];
  const max = text === undefined || text === '' ? MAX_KEPT_EVENTS : Number(text);
  if (!(Number.isInteger(max) && max > 0))
    throw new UsageError(`${KEPT_ENV} must be a whole number of events > 0, got '${text}'`);
  const raise =
    `set ${KEPT_ENV} higher (it is ${max}; each kept event takes ~200 bytes of memory, so raise ` +
    `Node's heap with it: NODE_OPTIONS=--max-old-space-size=MiB), or give fewer files`;
  return keptBudget(max, raise);
}

/** A pipe or standard input as a stream of chunks; read errors become an ImportError naming it. */
function pipeStream(path: string): ReadableStream<Uint8Array> {
  const name = path === STDIN ? 'standard input' : `'${path}'`;
  const source = path === STDIN ? createReadStream('', { fd: 0, autoClose: false }) : createReadStream(path);
  const chunks = (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const { done, value } = await chunks.next();
        if (done) c.close();
        else c.enqueue(new Uint8Array(value));
      } catch (e) {
        c.error(new ImportError(path, `cannot read ${name}: ${code(e)}`));
      }
    },
    cancel: () => {
      if (path !== STDIN) source.destroy();
    },
  });
}

/**
 * A file as a stream of chunks: `-` is standard input, a pipe is read as one; an ImportError naming
 * it when it is neither a regular file nor a pipe, or cannot be read.
 */
function fileStream(path: string): ReadableStream<Uint8Array> {
  if (path === STDIN) return pipeStream(path);
  let fd: number;
  try {
    // stat before open: opening a FIFO waits for a writer, so a pipe is streamed, never opened here
    const st = statSync(path);
    if (st.isFIFO() || st.isSocket()) return pipeStream(path);
    if (!st.isFile()) {
      const kind = st.isDirectory() ? 'a directory' : 'a device';
      throw new ImportError(path, `cannot read '${path}': not a regular file or pipe (${kind})`);
    }
    fd = openSync(path, 'r');
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(path, `cannot read '${path}': ${code(e)}`);
  }
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return new ReadableStream<Uint8Array>({
    pull(c) {
      try {
        const buf = new Uint8Array(CHUNK); // a new chunk each time: the parser may hold the last one
        const n = readSync(fd, buf, 0, CHUNK, null);
        if (n === 0) {
          close();
          c.close();
        } else c.enqueue(buf.subarray(0, n));
      } catch (e) {
        close();
        c.error(new ImportError(path, `cannot read '${path}': ${code(e)}`));
      }
    },
    cancel: close,
  });
}

/**
 * Each file's trace object with its events projected by `keep`, read one file after the other.
 * `label(i)` names file i in messages as its reader does (analyze: `trace`, `file[1]`), after its path;
 * `then` turns each file into what is kept of it (analyze: the importer's parse of it).
 */
export async function readTraceFiles(
  paths: readonly string[],
  keep: Keep,
  label?: (i: number) => string,
  then: (trace: unknown, i: number) => unknown = (t) => t,
): Promise<unknown[]> {
  const budget = keptEventsBudget();
  const set = process.env.FSDP_SIM_MAX_INPUT_MIB;
  const maxBytes = set === undefined || set === '' ? Infinity : inputLimit();
  const out: unknown[] = [];
  for (const [i, p] of paths.entries()) {
    const name = label ? label(i) : p;
    try {
      // `then` runs before the next file is read: what it keeps of this one is all that stays
      out.push(then(await readTraceStream(name, fileStream(p), { keep, budget, maxBytes }), i));
    } catch (e) {
      if (!(e instanceof ImportError) || name === p || e.where !== name) throw e;
      throw new ImportError(e.where, `${p}: ${e.message}`);
    }
  }
  return out;
}
