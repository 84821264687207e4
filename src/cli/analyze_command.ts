// `fsdp-sim analyze FILE... [--json]`: the importer on the command line, as users of Holistic Trace
// Analysis expect — per rank HTA's overlap, idle / compute / non-compute % and span, per
// ProfilerStep iteration the same, and the app's overall metrics (step, exposed, idle, peak,
// collective counts). Files are Kineto traces (.json or .json.gz, one per rank) or fsdp-sim exports.

import { ImportError } from '../errors';
import {
  analyzeTrace,
  type TraceAnalysis,
  importKeep,
  importTrace,
  parseTraceFile,
  COMM_KINDS,
  COMM_LABELS,
} from '../trace';
import { UsageError, parseFlags } from './flags';
import { textTable } from './cli_format';
import { stdinOnce, type Io } from './io';
import { readTraceFiles } from './trace_input';
import { GIB, formatDuration, formatPercent, MISSING, fixed, gibText } from '../util';

const ANALYZE_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const ANALYZE_USAGE = [
  'usage: fsdp-sim analyze FILE... [--json]',
  '',
  'Read PyTorch-profiler traces (one file per rank; .json or .json.gz) or fsdp-sim exports and print',
  "Holistic Trace Analysis' figures per rank: comm/compute overlap %, idle / compute / non-compute % of",
  "the span (HTA's temporal breakdown over its window: the last ProfilerStep is left out), then per",
  'iteration, then the overall step, exposed communication, idle, peak memory and collective counts.',
  '  --json               print {files, worldSize, warnings, ranks: [{rank, overlapPct, idlePct, computePct,',
  '                       nonComputePct, spanUs, ...}], iterations: [{iteration, rank, ...}], overall};',
  '                       a rank without communication has overlapPct null (HTA: NaN)',
].join('\n');

/** The columns a rank's row and an iteration's row share: span and HTA's temporal breakdown. */
const BREAKDOWN_HEAD = ['span ms', 'overlap %', 'idle %', 'compute %', 'non-compute %'] as const;
type Breakdown = Omit<TraceAnalysis['iterations'][number], 'iteration'>;

const breakdownCells = (r: Breakdown): string[] => [
  fixed(r.spanUs / 1000, 3),
  fixed(r.overlapPct, 2),
  fixed(r.idlePct, 2),
  fixed(r.computePct, 2),
  fixed(r.nonComputePct, 2),
];

function formatAnalysis(a: TraceAnalysis): string {
  const kinds = COMM_KINDS.filter((k) => a.ranks.some((r) => r.collectives[k] > 0));
  const ranks = textTable(
    ['rank', ...BREAKDOWN_HEAD, 'exposed ms', 'peak GiB', ...kinds.map((k) => `#${COMM_LABELS[k]}`)],
    a.ranks.map((r) => [
      String(r.rank),
      ...breakdownCells(r),
      fixed(r.exposedCommUs / 1000, 3),
      r.peakMemoryBytes ? fixed(r.peakMemoryBytes / GIB, 2) : MISSING,
      ...kinds.map((k) => String(r.collectives[k])),
    ]),
  );
  const iters = a.iterations.length
    ? textTable(
        ['iteration', 'rank', ...BREAKDOWN_HEAD],
        a.iterations.map((r) => [String(r.iteration), String(r.rank), ...breakdownCells(r)]),
      )
    : '(no ProfilerStep iterations in the analysed window)';
  const o = a.overall;
  const counts =
    COMM_KINDS.filter((k) => o.collectives[k] > 0)
      .map((k) => `${COMM_LABELS[k]} ${o.collectives[k]}`)
      .join(', ') || 'none';
  const ms = (us: number) => formatDuration(us, { unit: 'ms', digits: 3 });
  const peak = o.peakMemoryBytes ? gibText(o.peakMemoryBytes) : MISSING;
  const overall = [
    `overall: step ${ms(o.stepTimeUs)}, exposed comm ${ms(o.exposedCommUs)} (mean over ranks),`,
    `  overlap ${formatPercent(o.overlapPct, 2)}, idle ${ms(o.idleUs)}, peak ${peak}, ` +
      `collectives per rank (max): ${counts}`,
  ].join('\n');
  return [ranks, '', iters, '', overall].join('\n');
}

export async function analyzeCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags('analyze', argv, ANALYZE_OPTIONS, true);
  if (values.help) {
    io.out(ANALYZE_USAGE);
    return 0;
  }
  if (positionals.length === 0)
    throw new UsageError('fsdp-sim analyze: give at least one trace FILE (.json or .json.gz, one per rank)');
  stdinOnce('analyze', positionals);
  // streamed, each event kept as the importer reads it (trace_input.ts): memory holds the events, not the files
  const label = (i: number) => (positionals.length > 1 ? `file[${i}]` : 'trace');
  const parse = (t: unknown, i: number) => parseTraceFile(t, i, positionals.length); // file by file
  const traces = await readTraceFiles(positionals, importKeep, label, parse);
  const r = importTrace(traces.length === 1 ? traces[0] : traces);
  if (!r.ok) {
    // name the file: the importer says file[i]
    const m = /^file\[(\d+)\]/.exec(r.error.where);
    const file = m ? positionals[Number(m[1])] : positionals.join(', ');
    throw new ImportError(r.error.where, `${file}: ${r.error.message}`);
  }
  const a = analyzeTrace(r.value.events, r.value.memory ?? []);
  const named = (w: string) =>
    w.replace(/^file\[(\d+)\]|^trace\b/, (m, i?: string) => positionals[i === undefined ? 0 : Number(i)] ?? m);
  const warnings = r.value.warnings.map(named);
  if (values.json) {
    io.out(
      JSON.stringify(
        { files: positionals, worldSize: r.value.worldSize, source: r.value.source, warnings, ...a },
        null,
        1,
      ),
    );
  } else {
    for (const w of warnings) io.err(`warning: ${w}`);
    io.out(formatAnalysis(a));
  }
  return 0;
}
