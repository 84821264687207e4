// Trace files read as streams (issue 31): bytes → (gunzip) → a streaming JSON parser
// (@streamparser/json, browser and Node alike) → each event of `traceEvents` projected at once onto
// the fields its reader uses (`keep`), so memory holds what is kept, never the file's text nor its
// whole events: no size cap per file, no string of the file, any number of ranks. A gzip file is
// known by its magic bytes and inflated by the platform's DecompressionStream (as gzip.ts).
// An event a reader never looks at becomes one shared empty object, so every kept event keeps its
// index and messages still name `traceEvents[i]` as the whole-text import did. The result is the
// trace object the importers take ({...top-level fields, traceEvents}), or the value of a file
// that is not an object or array (a scalar: the importer refuses it in its own words).
// Events kept over all files of one import are counted against a budget (`KeptBudget`).

import { JSONParser } from '@streamparser/json';
import { ImportError } from '../errors';
import { MEMORY_COUNTER } from './chrome_export';
import { isObject, type Json } from './import_fields';
import { mibText } from '../util';

/** What an event becomes: a projection of it, the event itself, or DROPPED (its reader skips it). */
export type Keep = (e: unknown, intern: (s: string) => string) => unknown;

/** One empty event: what a reader never looks at (no `ph`), shared by every such event. */
export const DROPPED: Json = Object.freeze({}) as Json;

/** Events kept over the files of one import: past `max` the import stops and says how to raise it. */
export interface KeptBudget {
  readonly max: number;
  /** How a user raises it (`FSDP_SIM_MAX_KEPT_EVENTS=…`): said in the message. */
  readonly raise: string;
  kept: number;
}

/**
 * Default budget on kept events: ~200 bytes each once projected and imported, so 12M events stay
 * near 2.5 GB, inside Node's default heap (~4 GB) with the metrics' own arrays.
 */
export const MAX_KEPT_EVENTS = 12_000_000;

export const keptBudget = (max = MAX_KEPT_EVENTS, raise = 'import fewer or shorter traces'): KeptBudget => ({
  max,
  raise,
  kept: 0,
});

/** Stream options: what to keep of each event, the budget over files, a cap on bytes read (inflated). */
export interface StreamOptions {
  readonly keep: Keep;
  readonly budget?: KeptBudget;
  /** At most this many bytes of JSON text (after gunzip) are read; Infinity by default. */
  readonly maxBytes?: number;
}

const pick = (o: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
};

const X_ARGS = ['stream', 'correlation', 'Collective name', 'fsdp_sim'] as const;
const MEMORY_ARGS = ['Device Type', 'Device Id', 'Total Allocated'] as const;

/**
 * What the trace importer (import.ts, kineto.ts, hta.ts) reads of an event: 'X' events' ph, cat,
 * name, ts, dur, pid and args stream / correlation / 'Collective name' / fsdp_sim; our memory
 * counters whole; Kineto's [memory] instants' device and total. Anything malformed is kept as it is,
 * so its message is the one the whole-text import gave.
 */
export const importKeep: Keep = (e, intern) => {
  if (!isObject(e)) return e;
  if (e.ph === 'X') {
    // 'X' and 'i' as literals: the parser's own copy of each is a string per event
    const out: Json = { ph: 'X', ...pick(e, ['ts', 'dur', 'pid']) };
    if (e.name !== undefined) out.name = typeof e.name === 'string' ? intern(e.name) : e.name;
    if (e.cat !== undefined) out.cat = typeof e.cat === 'string' ? intern(e.cat) : e.cat;
    if (isObject(e.args)) {
      const args = pick(e.args, X_ARGS);
      for (const _ in args) {
        out.args = args; // none of them (a CPU op): no args, which every reader takes as {}
        break;
      }
    } else if (e.args !== undefined) out.args = e.args;
    return out;
  }
  if (e.ph === 'C' && e.name === MEMORY_COUNTER) return e;
  if (e.ph === 'i' && e.name === '[memory]') {
    const out: Json = { ph: 'i', name: '[memory]', ...pick(e, ['ts', 'pid']) };
    if (e.args !== undefined) out.args = isObject(e.args) ? pick(e.args, MEMORY_ARGS) : e.args;
    return out;
  }
  return DROPPED;
};

const isGzip = (b: Uint8Array): boolean => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const mib = (n: number): string => mibText(n, n < 2 ** 20 ? 3 : 0);

/** The first chunks of a stream until `n` bytes (or its end), and the rest as a stream. */
async function peek(
  s: ReadableStream<Uint8Array>,
  n: number,
): Promise<{ head: Uint8Array; rest: ReadableStream<Uint8Array> }> {
  const reader = s.getReader();
  const parts: Uint8Array[] = [];
  let len = 0;
  let done = false;
  while (len < n) {
    const r = await reader.read();
    if (r.done) {
      done = true;
      break;
    }
    parts.push(r.value);
    len += r.value.length;
  }
  const head = new Uint8Array(len);
  let at = 0;
  for (const p of parts) {
    head.set(p, at);
    at += p.length;
  }
  const rest = new ReadableStream<Uint8Array>({
    start(c) {
      if (head.length) c.enqueue(head);
      if (done) c.close();
    },
    async pull(c) {
      const r = await reader.read();
      if (r.done) c.close();
      else c.enqueue(r.value);
    },
    cancel: (why) => reader.cancel(why),
  });
  return { head, rest };
}

class StreamFail extends Error {}

/** The file's bytes as JSON text: gzip (known by its magic bytes) inflated, its first bytes already read. */
async function openText(
  name: string,
  bytes: ReadableStream<Uint8Array>,
): Promise<{ rest: ReadableStream<Uint8Array>; gzip: boolean }> {
  let { head, rest } = await peek(bytes, 2);
  const gzip = isGzip(head);
  if (gzip) {
    rest = rest.pipeThrough(new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>);
  }
  // read the first (inflated) bytes now: a corrupt gzip header fails here, as a gzip error
  ({ head, rest } = await peek(rest, 3).catch((e) => {
    throw gunzipError(name, e);
  }));
  return { rest, gzip };
}

/** The streaming parser of one file and what it keeps: the projected events and the top-level fields. */
class TraceCollector {
  readonly parser = new JSONParser({ paths: ['$.*', '$.traceEvents.*'], keepStack: false });
  private readonly kept: unknown[] = [];
  private top: Json | undefined;
  private readonly names = new Map<string, string>();

  constructor(
    private readonly name: string,
    private readonly keep: Keep,
    private readonly budget: KeptBudget | undefined,
  ) {
    this.parser.onValue = ({ value, key, parent, stack }) => {
      if ((stack.length === 1 || stack.length === 2) && Array.isArray(parent)) {
        this.take(value);
        parent.length = 0; // the parser's copy goes: the projection is what stays
      } else if (stack.length === 1 && typeof key === 'string') {
        this.top ??= {};
        this.top[key] = key === 'traceEvents' && Array.isArray(value) ? this.kept : value;
      }
    };
  }

  /** The trace object the importers take: a top-level array's events, or the object with its kept events. */
  result(topLevelArray: boolean): unknown {
    return topLevelArray ? { traceEvents: this.kept } : (this.top ?? {});
  }

  private readonly intern = (s: string): string => {
    const t = this.names.get(s);
    if (t !== undefined) return t;
    this.names.set(s, s);
    return s;
  };

  private take(v: unknown): void {
    const k = this.keep(v, this.intern);
    const { budget, name } = this;
    if (k !== DROPPED && budget && ++budget.kept > budget.max)
      throw new ImportError(
        name,
        `${name} takes the import past its budget of ${budget.max.toLocaleString('en-US')} kept trace events ` +
          `(over all files); ${budget.raise}`,
      );
    this.kept.push(k);
  }
}

/** The JSON text chunk by chunk: its first character decides whether it streams ('{', '[') or is parsed whole. */
class TextFeed {
  first = -1; // the first character of the text, once seen
  private scalar = '';
  private readonly decoder = new TextDecoder();

  constructor(private readonly parser: JSONParser) {}

  /** Whether the text is no object or array (so far: nothing but whitespace is one too). */
  get isScalar(): boolean {
    return this.first !== 0x7b && this.first !== 0x5b;
  }

  feed(bytes: Uint8Array): void {
    let chunk = bytes;
    if (this.first < 0) {
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3); // BOM
      let i = 0;
      while (i < chunk.length && isSpace(chunk[i])) i++;
      if (i === chunk.length) return;
      this.first = chunk[i];
      if (!/["\-0-9tfn{[]/.test(String.fromCharCode(this.first))) {
        const start = JSON.stringify(String.fromCharCode(this.first));
        throw new StreamFail(`it starts with ${start}, which starts no JSON value`);
      }
    }
    if (this.isScalar) {
      this.scalar += this.decoder.decode(chunk, { stream: true });
      if (this.scalar.length > 2 ** 20) throw new StreamFail('it is not a Chrome trace object or array');
      return;
    }
    if (this.parser.isEnded) {
      // text after the value: JSON.parse refuses it unless it is whitespace
      if (chunk.some((c) => !isSpace(c))) throw new StreamFail('unexpected text after the end of the JSON value');
      return;
    }
    this.parser.write(chunk);
  }

  /** The scalar's value (JSON.parse throws on an empty or bad text). */
  scalarValue(): unknown {
    return JSON.parse(this.scalar + this.decoder.decode());
  }
}

/** Reads the text to its end into `text`; returns the bytes read. Past `maxBytes` it stops with an ImportError. */
async function pump(
  name: string,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  text: TextFeed,
  { gzip, maxBytes }: { gzip: boolean; maxBytes: number },
): Promise<number> {
  let n = 0;
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (e) {
      throw gzip ? gunzipError(name, e) : e;
    }
    if (r.done) return n;
    n += r.value.length;
    if (n > maxBytes) {
      await reader.cancel();
      const inflated = gzip ? 'inflates (gzip) to' : 'holds';
      const over = `more than the ${mib(maxBytes)} limit on a trace's text; not read further`;
      throw new ImportError(name, `${name} ${inflated} ${over}`);
    }
    text.feed(r.value);
  }
}

/**
 * A trace file's JSON, read as a stream: each event of its `traceEvents` (or of a top-level array)
 * kept as `opts.keep` projects it. Errors are ImportErrors naming `name`: not gzip, not JSON, cut
 * short, over `maxBytes`, or over the budget on kept events.
 */
export async function readTraceStream(
  name: string,
  bytes: ReadableStream<Uint8Array>,
  opts: StreamOptions,
): Promise<unknown> {
  const { keep, budget, maxBytes = Infinity } = opts;
  const { rest, gzip } = await openText(name, bytes);
  const events = new TraceCollector(name, keep, budget);
  const text = new TextFeed(events.parser);
  const reader = rest.getReader();
  try {
    const n = await pump(name, reader, text, { gzip, maxBytes });
    if (text.isScalar) return text.scalarValue();
    if (!events.parser.isEnded) {
      throw new StreamFail(`it ends after ${n} bytes, inside its JSON value (a file cut short?)`);
    }
  } catch (e) {
    if (e instanceof ImportError) throw e;
    await reader.cancel().catch(() => undefined);
    throw new ImportError(name, `${name} is not valid JSON: ${(e as Error).message}`);
  }
  return events.result(text.first === 0x5b);
}

const gunzipError = (name: string, e: unknown): ImportError =>
  e instanceof ImportError
    ? e
    : new ImportError(name, `${name} could not be decompressed (gzip): ${(e as Error).message}`);
