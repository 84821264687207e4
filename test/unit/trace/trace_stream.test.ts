// Trace files read as streams (issue 31): the same events, metrics and samples as the whole-text
// import on the repo's fixtures, gzip streamed, no cap on a file's size, a cut or corrupt stream
// named, and the budget on kept events worded with how to raise it.
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { calibrateKeep, TraceSampleReader, traceSamples } from '../../../src/pipeline/calibrate_kineto';
import { runPipeline } from '../../../src/pipeline';
import { defaultConfig } from '../../../src/config';
import { analyzeTrace } from '../../../src/trace/analysis';
import { exportChromeTrace } from '../../../src/trace/chrome_export';
import { chromeTraceJson } from '../../../src/trace/chrome_json';
import { traceText } from '../../../src/trace/gzip';
import { importTrace, parseTraceFile } from '../../../src/trace/import';
import { DROPPED, importKeep, keptBudget, readTraceStream } from '../../../src/trace/trace_stream';
import { kinetoFiles } from '../../helpers/kineto_synth';
import { fixturePath } from '../../helpers/fixtures';

const htaFiles: string[] = JSON.parse(readFileSync(fixturePath('hta/expected.json'), 'utf8')).trace_filter.files;

/** Bytes as a stream of `size`-byte chunks (a chunk boundary falls inside tokens and characters). */
function chunked(bytes: Uint8Array | string, size = 4093): ReadableStream<Uint8Array> {
  const b = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= b.length) c.close();
      else c.enqueue(b.slice(at, (at += size)));
    },
  });
}

const ok = <T>(r: { ok: true; value: T } | { ok: false; error: Error }): T => {
  if (!r.ok) throw r.error;
  return r.value;
};

describe('a trace read as a stream', () => {
  it("gives HTA's fixtures the same events, memory, warnings and figures as the whole text (gzip)", async () => {
    const gz = htaFiles.map((f) => new Uint8Array(readFileSync(fixturePath('hta', f))));
    const texts = await Promise.all(gz.map((b, i) => traceText(htaFiles[i], b)));
    const streamed = await Promise.all(
      gz.map((b, i) => readTraceStream(htaFiles[i], chunked(b), { keep: importKeep })),
    );
    const before = ok(importTrace(texts));
    const after = ok(importTrace(streamed));
    expect(after).toEqual(before);
    expect(analyzeTrace(after.events, after.memory)).toEqual(analyzeTrace(before.events, before.memory));
    // most of a Kineto file is never read by the importer: those events are one shared empty object
    const evs = (streamed[0] as { traceEvents: unknown[] }).traceEvents;
    expect(evs.length).toBe(JSON.parse(texts[0]).traceEvents.length);
    expect(evs.filter((e) => e === DROPPED).length).toBeGreaterThan(0);
  });

  it('imports files parsed as soon as each is read as it imports them together, errors included', async () => {
    const gz = htaFiles.map((f) => new Uint8Array(readFileSync(fixturePath('hta', f))));
    const streamed = await Promise.all(
      gz.map((b, i) => readTraceStream(htaFiles[i], chunked(b), { keep: importKeep })),
    );
    const early = streamed.map((t, i) => parseTraceFile(t, i, streamed.length));
    expect(ok(importTrace(early))).toEqual(ok(importTrace(streamed)));
    const bad = { traceEvents: [{ ph: 'X', name: 'k', ts: 'soon', args: { stream: 7, correlation: 1 } }] };
    const r = importTrace([early[0], parseTraceFile(bad, 1, 2)]);
    expect(r.ok ? '' : r.error.message).toBe('file[1].traceEvents[0].ts must be a number in [0, 2^53) µs, got "soon"');
  });

  it("gives fsdp-sim's own export (memory curves, buckets) the same import as the whole text", async () => {
    const run = runPipeline({ ...defaultConfig(), model: 'tiny', ranks: 2 }, 'aot_eager', {});
    const trace = exportChromeTrace({ events: run.sim.events, memory: run.sim.memory, worldSize: run.sim.worldSize });
    const text = [...chromeTraceJson(trace)].join('');
    const streamed = await readTraceStream('own.json', chunked(text, 777), { keep: importKeep });
    expect(ok(importTrace(streamed))).toEqual(ok(importTrace(text)));
  });

  it('gives calibration the same samples as the parsed files', async () => {
    for (const onKernel of [true, false]) {
      const files = kinetoFiles(onKernel);
      const streamed = await Promise.all(
        files.map(async (f) => ({
          name: f.name,
          json: await readTraceStream(f.name, chunked(gzipSync(JSON.stringify(f.json))), { keep: calibrateKeep }),
        })),
      );
      expect(ok(traceSamples(streamed))).toEqual(ok(traceSamples(files)));
    }
    // file by file as each arrives; the first file's error is the one returned
    const reader = new TraceSampleReader(3);
    reader.add('a.json', kinetoFiles(true)[0].json);
    reader.add('b.json', { x: 1 });
    reader.add('c.json', 42);
    const r = reader.result();
    expect(r.ok ? '' : r.error.message).toBe('b.json: not a Kineto trace (no traceEvents array)');
  });

  it('reads a trace larger than the old per-file cap, in pieces, and holds none of its text', async () => {
    const text = await traceText(htaFiles[0], readFileSync(fixturePath('hta', htaFiles[0])));
    const cap = 2 ** 20; // the whole-text reader's cap, lowered for the test (it was 500 MiB, not raisable)
    expect(text.length).toBeGreaterThan(cap);
    await expect(traceText('big.json', new TextEncoder().encode(text), cap)).rejects.toThrow(/over the 1 MiB limit/);
    const streamed = await readTraceStream('big.json', chunked(text, 64 * 1024), { keep: importKeep });
    expect(ok(importTrace(streamed)).events).toEqual(ok(importTrace(text)).events);
    // a cap can still be asked for: it stops the stream there
    await expect(readTraceStream('big.json', chunked(text), { keep: importKeep, maxBytes: cap })).rejects.toThrow(
      /^big\.json holds more than the 1 MiB limit on a trace's text; not read further$/,
    );
  });

  it('names the file of a cut, corrupt or non-JSON stream', async () => {
    const gz = new Uint8Array(readFileSync(fixturePath('hta', htaFiles[0])));
    const text = gunzipSync(gz);
    const read = (name: string, b: Uint8Array | string) => readTraceStream(name, chunked(b), { keep: importKeep });
    await expect(read('cut.json', text.subarray(0, text.length >> 1))).rejects.toThrow(
      /^cut\.json is not valid JSON: it ends after \d+ bytes, inside its JSON value \(a file cut short\?\)$/,
    );
    await expect(read('cut.json.gz', gz.subarray(0, gz.length >> 1))).rejects.toThrow(
      /^cut\.json\.gz could not be decompressed \(gzip\): /,
    );
    await expect(read('bad.json.gz', new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).rejects.toThrow(
      /^bad\.json\.gz could not be decompressed \(gzip\)/,
    );
    await expect(read('junk.json', '{"traceEvents": [{"ph": "X",, }]}')).rejects.toThrow(
      /^junk\.json is not valid JSON: /,
    );
    await expect(read('empty.json', '')).rejects.toThrow(/^empty\.json is not valid JSON: /);
    // a scalar or a BOM reads as JSON.parse reads it: the importer then words what it is not
    expect(await read('n.json', '42')).toBe(42);
    expect(await read('bom.json', '\ufeff{"traceEvents": []}')).toEqual({ traceEvents: [] });
    const kernel = { ph: 'X', name: 'k', ts: 1, dur: 2, args: { stream: 7, correlation: 1 } };
    expect(ok(importTrace(await read('arr.json', JSON.stringify([kernel])))).events).toHaveLength(1);
  });

  it('stops at the budget on kept events over all files, naming the budget and how to raise it', async () => {
    const budget = keptBudget(3, 'set FSDP_SIM_MAX_KEPT_EVENTS higher');
    const ev = '{"ph": "X", "name": "k", "ts": 1, "dur": 2}';
    const meta = '{"ph": "M", "name": "thread_name"}';
    const text = `{"traceEvents": [${ev}, ${meta}, ${meta}, ${ev}]}`;
    await readTraceStream('a.json', chunked(text), { keep: importKeep, budget });
    expect(budget.kept).toBe(2); // dropped events are not counted
    await expect(
      readTraceStream('b.json', chunked(`{"traceEvents": [${ev}, ${ev}]}`), { keep: importKeep, budget }),
    ).rejects.toThrow(
      new RegExp(
        String.raw`^b\.json takes the import past its budget of 3 kept trace events \(over all files\); ` +
          'set FSDP_SIM_MAX_KEPT_EVENTS higher$',
      ),
    );
  });
});
