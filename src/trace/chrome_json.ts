// A Chrome trace as JSON text in chunks, so a trace of hundreds of MB (llama3-405b on 63 ranks:
// ~470 MB) is written without building one string of that size (V8 caps a string near 512 MB).
// Joined, the chunks are exactly JSON.stringify(trace): byte for byte the same file.

import type { ChromeTrace } from './chrome_export';

/** Events per chunk: ~2–4 MB of text, large enough that writing stays one call per chunk. */
const EVENTS_PER_CHUNK = 10_000;

export function* chromeTraceJson(trace: ChromeTrace, eventsPerChunk = EVENTS_PER_CHUNK): Generator<string> {
  const { traceEvents, ...rest } = trace;
  // traceEvents first, as the export builds the object (and so as JSON.stringify orders it)
  if (Object.keys(trace)[0] !== 'traceEvents') {
    yield JSON.stringify(trace);
    return;
  }
  yield '{"traceEvents":[';
  for (let i = 0; i < traceEvents.length; i += eventsPerChunk) {
    const part = traceEvents
      .slice(i, i + eventsPerChunk)
      .map((e) => JSON.stringify(e))
      .join(',');
    yield i === 0 ? part : `,${part}`;
  }
  yield ']';
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) yield `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  yield '}';
}
