// A Chrome trace as JSON text in chunks, so a trace of hundreds of MB (llama3-405b on 63 ranks:
// ~470 MB) is written without building one string of that size (V8 caps a string near 512 MB).
// The file opens as the PyTorch profiler's own do: `{"distributedInfo": {"rank": 3, ...},` on its
// first line, spaced as Python's json writes it. Holistic Trace Analysis finds a file's rank with
// the regex `"rank":\s+(\d+)` on the raw text (a space is required), so compact JSON would make
// every rank file rank 0 to it. The rest is compact; parsed, the text equals the trace object.

import type { ChromeTrace } from './chrome_export';

/** Events per chunk: ~2–4 MB of text, large enough that writing stays one call per chunk. */
const EVENTS_PER_CHUNK = 10_000;

/** `{"rank": 3, "world_size": 8}`: Python's json.dumps spacing, as Kineto writes distributedInfo. */
const pythonJson = (o: Readonly<Record<string, unknown>>): string =>
  `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;

export function* chromeTraceJson(trace: ChromeTrace, eventsPerChunk = EVENTS_PER_CHUNK): Generator<string> {
  const { distributedInfo, traceEvents, ...rest } = trace;
  yield `{"distributedInfo": ${pythonJson(distributedInfo)},\n"traceEvents":[`;
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
