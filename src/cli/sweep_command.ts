// `fsdp-sim sweep`: the cross product of values of any config fields, each point simulated under
// each backend; a table, --json or --csv with one row per point and backend.

import { BACKEND_NAMES, type BackendName } from '../backends';
import { CONFIG_FIELDS } from '../config';
import {
  MAX_SWEEP_POINTS,
  parseVary,
  runSweepPoints,
  sweepCsv,
  sweepPoints,
  sweepSeconds,
  type SweepAxis,
  type SweepRow,
} from '../pipeline';
import {
  CONFIG_OPTIONS,
  DEFAULT_BACKENDS_HELP,
  UsageError,
  configFromFlags,
  inertKnob,
  parseBackends,
  parseFlags,
} from './flags';
import { textTable } from './cli_format';
import type { Io } from './io';
import { GIB, formatShare, fixed } from '../util';
import { mismatchText, wordedSweepRow } from '../words';

const SWEEP_OPTIONS = {
  ...CONFIG_OPTIONS,
  vary: { type: 'string', multiple: true },
  backends: { type: 'string' },
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  'budget-min': { type: 'string' },
  progress: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Default --budget-min: a sweep estimated to run longer is refused before it starts. */
const BUDGET_MIN = 15;
/** A sweep estimated to run this long prints its progress on stderr (--progress: any sweep). */
const PROGRESS_AFTER_S = 10;
/** At most one progress line per this many ms (the first and last point always print). */
const PROGRESS_EVERY_MS = 2000;

export const SWEEP_USAGE = [
  'usage: fsdp-sim sweep --vary PATH=V1,V2,... [--vary PATH=A:B:STEP] [--backends A,B] [config flags] [--json|--csv]',
  '',
  'Simulate the cross product of the --vary values (first --vary slowest) under each backend.',
  '  --vary PATH=VALUES   a config field by its path (as --set and the URL name it) and its values: a list',
  '                       (8,16,64) or, for a numeric field, a range A:B:STEP with B included (0.5:10:0.5);',
  `                       at most ${MAX_SWEEP_POINTS} points in all; repeatable. Fields:`,
  `                       ${CONFIG_FIELDS.map((f) => f.path).join(', ')}`,
  `  --backends A,B       backends to run, each one of [${BACKEND_NAMES.join(', ')}]`,
  `                       ${DEFAULT_BACKENDS_HELP}`,
  '  --json               print {"axes":[{path, values}], "rows":[{point, values, backend, stepTimeMs, exposedCommMs,',
  '                       overlapPct, peakMemoryBytes, peakReservedBytes, allGathers, reduceScatters, fitsHbm}]}',
  '  --csv                the same rows as CSV, one column per varied field first',
  `  --budget-min M       refuse a sweep estimated to run longer than M minutes (default ${BUDGET_MIN}); the estimate:`,
  '                       ~9 ms per model layer per backend and point, ×(1 + ranks/16) when ranks differ',
  `  --progress           a progress line on stderr (default: for sweeps estimated over ${PROGRESS_AFTER_S} s)`,
  '  config flags         as for compare (--model, --ranks, --set PATH=VALUE, ...): the point every --vary starts from',
  '',
  'example: fsdp-sim sweep --model llama3-8b --ranks 8 --vary autobucketing.max_in_flight_gb=0.5,1,2,5,10',
].join('\n');

/** A fixed-width table: the varied fields, then the figures of each backend's run. */
function formatSweepTable(axes: readonly SweepAxis[], rows: readonly SweepRow[]): string {
  const head = [
    ...axes.map((a) => a.path),
    'backend',
    'step ms',
    'exposed ms',
    'overlap %',
    'peak live tensors GiB',
    'peak reserved GiB',
    '#AG',
    '#RS',
    'fits HBM',
  ];
  const body = rows.map((r) => [
    ...axes.map((a) => String(r.values[a.path])),
    r.backend,
    fixed(r.stepTimeMs, 2),
    fixed(r.exposedCommMs, 2),
    fixed(r.overlapPct, 1),
    fixed(r.peakMemoryBytes / GIB, 2),
    fixed(r.peakReservedBytes / GIB, 2),
    String(r.allGathers),
    String(r.reduceScatters),
    r.hang ? 'hang' : r.fitsHbm ? 'yes' : 'NO',
  ]);
  return textTable(head, body, { left: (i) => i <= axes.length, rule: true });
}

const DECIMAL = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A UsageError when the estimate passes --budget-min (default BUDGET_MIN), naming both and the way out. */
function checkBudget(text: string | undefined, seconds: number, n: number, backends: readonly BackendName[]): void {
  // decimal text only, as config numbers: Number() would also take '0x10', ' 5' and 'Infinity'
  const budget = text === undefined ? BUDGET_MIN : DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!(budget > 0 && Number.isFinite(budget)))
    throw new UsageError(`fsdp-sim sweep: --budget-min must be a number of minutes > 0, got '${text}'`);
  const minutes = seconds / 60;
  if (minutes <= budget) return;
  throw new UsageError(
    `fsdp-sim sweep: ${n} points × ${backends.length} backend(s) would run about ${fixed(minutes, 0)} min ` +
      `(~${fixed((seconds / n / backends.length) * 1000, 0)} ms a run), over the ${budget} min budget; ` +
      `narrow the --vary values or give --budget-min ${Math.ceil(minutes)}`,
  );
}

/** `sweep: 40/400 points (10%)` on stderr: the first point, the last, and one line per PROGRESS_EVERY_MS. */
function progressLine(io: Io): (done: number, total: number) => void {
  let last = -Infinity;
  return (done, total) => {
    const now = performance.now();
    if (done !== 1 && done !== total && now - last < PROGRESS_EVERY_MS) return;
    last = now;
    io.err(`sweep: ${done}/${total} points (${formatShare(done, total, 0)})`);
  };
}

/** The config's backend fields: varying one changes which backends a point runs. */
const BACKEND_PATHS = ['backendA', 'backendB'];

/**
 * The backends each point runs: --backends (or the config's A and B) when no --vary names a
 * backend; else the point's own backendA and backendB (once each). --backends with such a --vary is
 * refused: the one fixes what the other varies.
 */
function pointBackends(
  axes: readonly SweepAxis[],
  flag: string | undefined,
  fixed: readonly BackendName[],
): (p: ReturnType<typeof sweepPoints>[number]) => readonly BackendName[] {
  const varied = axes.find((a) => BACKEND_PATHS.includes(a.path));
  if (varied === undefined) return () => fixed;
  if (flag !== undefined)
    throw new UsageError(
      `fsdp-sim sweep: --vary ${varied.path} sets the backends each point runs, and --backends fixes them; give one`,
    );
  return (p) => [...new Set([p.config.backendA, p.config.backendB])];
}

export async function sweepCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseFlags('sweep', argv, SWEEP_OPTIONS);
  if (values.help) {
    io.out(SWEEP_USAGE);
    return 0;
  }
  if (values.json && values.csv) throw new UsageError('fsdp-sim sweep: give --json or --csv, not both');
  const varies = values.vary ?? [];
  if (varies.length === 0)
    throw new UsageError('fsdp-sim sweep: give at least one --vary PATH=VALUES (e.g. --vary ranks=8,16,64)');
  const cfg = configFromFlags('sweep', values);
  const backends = parseBackends('sweep', values.backends, [cfg.backendA, cfg.backendB]);
  const axes = varies.map(parseVary);
  const backendsOf = pointBackends(axes, values.backends, backends);
  const points = sweepPoints(cfg, axes); // every value checked, before anything runs
  // a varied knob the point's compile mode never reads gives identical rows: refused by name
  for (const p of points) {
    const why = inertKnob(
      (path) => axes.some((a) => a.path === path),
      p.config,
      (path) => `--vary ${path}`,
    );
    if (why !== undefined) throw new UsageError(`fsdp-sim sweep: point ${p.index}: ${why}`);
  }
  const seconds = sweepSeconds(points, backends);
  checkBudget(values['budget-min'], seconds, points.length, backends);
  const progress = values.progress || seconds >= PROGRESS_AFTER_S ? progressLine(io) : undefined;
  const rows = runSweepPoints(points, backendsOf, progress);
  if (values.json)
    io.out(
      JSON.stringify({ axes, rows: rows.map(wordedSweepRow) }, (_k, v) =>
        typeof v === 'number' && Number.isNaN(v) ? null : v,
      ),
    );
  else if (values.csv) io.out(sweepCsv(axes, rows, mismatchText));
  else io.out(formatSweepTable(axes, rows));
  const hangs = rows.filter((r) => r.hang);
  for (const r of hangs) io.err(`fsdp-sim sweep: point ${r.point} ${r.backend}: ${mismatchText(r.hang!)}`);
  return hangs.length ? 1 : 0;
}
