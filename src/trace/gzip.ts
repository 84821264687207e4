// Trace files as bytes → text: `.json.gz` (what torch.profiler writes by default) is gunzipped
// with the web-standard DecompressionStream, which browsers and Node (≥ 18) both provide, so the
// app and the CLI read a file the same way. A gzip file is known by its magic bytes, not its name.

import { ImportError } from '../errors';

const isGzip = (b: Uint8Array): boolean => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The text of a trace file (gzipped or not); an ImportError naming the file when it cannot be read. */
export async function traceText(name: string, bytes: Uint8Array): Promise<string> {
  try {
    return new TextDecoder().decode(isGzip(bytes) ? await gunzip(bytes) : bytes);
  } catch (e) {
    throw new ImportError(name, `${name} could not be decompressed (gzip): ${(e as Error).message}`);
  }
}
