// Trace files as bytes → text: `.json.gz` (what torch.profiler writes by default) is gunzipped
// with the web-standard DecompressionStream, which browsers and Node (≥ 18) both provide, so the
// app and the CLI read a file the same way. A gzip file is known by its magic bytes, not its name.
// Both are bounded: text over MAX_TRACE_BYTES, stored or inflated, is refused. Trace files for
// analyze, calibrate and the app no longer come here: they are streamed (trace_stream.ts), uncapped;
// this whole-text reader stays for the CLI's other inputs (FX dumps, torch logs: cli/io.ts).

import { ImportError } from '../errors';
import { MIB, mibText } from '../util';

/**
 * The most bytes a trace's text may hold, gzipped content included: under V8's longest string
 * (2^29 − 24 UTF-16 units), so a file is refused for its size, never by "Cannot create a string".
 * A 63-rank llama3-405b export (~470 MB) fits.
 */
export const MAX_TRACE_BYTES = 500 * 2 ** 20;

const mib = (n: number): string => mibText(n, n < MIB ? 3 : 0);

const isGzip = (b: Uint8Array): boolean => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

class TooLarge extends Error {}

/** Inflated in chunks with a byte count: a gzip bomb stops at `limit`, never inflated whole. */
async function gunzip(bytes: Uint8Array, limit: number): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > limit) {
      await reader.cancel();
      throw new TooLarge();
    }
    parts.push(value);
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The text of a trace file (gzipped or not; a UTF-8 BOM dropped, as TextDecoder does); an
 * ImportError naming the file when it cannot be read or holds more than `limit` bytes. `strict`:
 * bytes that are not UTF-8 are refused too, not read as U+FFFD (JSON is UTF-8; a log may not be).
 */
export async function traceText(
  name: string,
  bytes: Uint8Array,
  limit = MAX_TRACE_BYTES,
  strict = false,
): Promise<string> {
  if (bytes.length > limit)
    throw new ImportError(name, `${name} is ${mib(bytes.length)}, over the ${mib(limit)} limit on a trace's text`);
  let text: Uint8Array = bytes;
  if (isGzip(bytes)) {
    try {
      text = await gunzip(bytes, limit);
    } catch (e) {
      if (e instanceof TooLarge)
        throw new ImportError(
          name,
          `${name} inflates (gzip) to more than the ${mib(limit)} limit on a trace's text; not read further`,
        );
      throw new ImportError(name, `${name} could not be decompressed (gzip): ${(e as Error).message}`);
    }
  }
  if (!strict) return new TextDecoder().decode(text);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(text);
  } catch {
    throw new ImportError(name, `${name} is not UTF-8 text (it holds a byte sequence UTF-8 does not allow)`);
  }
}
