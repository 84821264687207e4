// Child of bench/trace_stream.ts: analyses rank files once, as `fsdp-sim analyze` does, by the
// whole-text reader (`text`: the file's text, then JSON.parse, as before issue 31) or the stream
// (`stream`: each file parsed by the importer as soon as it is read, as analyze does), and prints
// {maxRssMiB, keptMiB, events, s} as JSON. A process of its own, so its peak RSS is its own:
// `node --expose-gc --import tsx bench/trace_stream_child.ts stream|text FILE...`.

import { readInputText } from '../src/cli/io';
import { readTraceFiles } from '../src/cli/trace_input';
import { analyzeTrace, importKeep, importTrace, parseTraceFile } from '../src/trace';

const [mode, ...files] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
/** Live heap, MiB, after a full collection (run with --expose-gc). */
const live = () => {
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const start = live();
const t0 = performance.now();
let inputs: unknown[];
if (mode === 'text') {
  inputs = [];
  for (const f of files) inputs.push(await readInputText(f));
} else inputs = await readTraceFiles(files, importKeep, undefined, (t, i) => parseTraceFile(t, i, files.length));
const keptMiB = live() - start; // what the reader holds for the importer: texts, or each file's parse
const r = importTrace(inputs.length === 1 ? inputs[0] : inputs);
if (!r.ok) throw r.error;
const a = analyzeTrace(r.value.events, r.value.memory ?? []);
process.stdout.write(
  `${JSON.stringify({
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    keptMiB,
    events: r.value.events.length,
    ranks: a.ranks.length,
    s: (performance.now() - t0) / 1000,
  })}\n`,
);
