// `fsdp-sim diff`: every collective of one rank under backend A matched to backend B (by kind,
// phase and the parameters it moves): where it ran, what it exposed, what hid it in B and why.

import { BACKEND_NAMES } from '../backends';
import {
  buildGraph,
  runPipelineOnGraph,
  DIFF_COLUMNS,
  diffBackends,
  diffInputOf,
  diffCsv,
  hidesInB,
  type BackendDiff,
  culpritPlan,
  findCulprit,
  type Culprit,
} from '../pipeline';
import { meshOfParallelism } from '../config';
import { waitOfGraph } from '../trace';
import { culpritSkipText, mismatchText, reasonText, wordedDiff } from '../words';
import {
  CONFIG_OPTIONS,
  DEFAULT_BACKENDS_HELP,
  type FlagRule,
  UsageError,
  configFromFlags,
  describeRule,
  flagValue,
  parseBackends,
  parseFlags,
} from './flags';
import { textTable } from './cli_format';
import type { Io } from './io';
import { formatDuration, fixed } from '../util';

const DIFF_OPTIONS = {
  ...CONFIG_OPTIONS,
  backends: { type: 'string' },
  rank: { type: 'string' },
  top: { type: 'string' },
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const DIFF_USAGE = [
  'usage: fsdp-sim diff [--model NAME] [--ranks N] [--backends A,B] [--rank R] [--top K] [config flags] [--json|--csv]',
  '',
  'Match every collective of rank R under backend A to backend B by what it moves (kind, phase, parameters;',
  'bucket members each get a row) and show start, wait and exposed µs in A and B, what hides it in B and why.',
  `  --backends A,B       exactly two, each one of [${BACKEND_NAMES.join(', ')}]`,
  `                       ${DEFAULT_BACKENDS_HELP}`,
  '  --rank R             the rank whose trace is diffed (default 0)',
  '  --top K              the table: only the K rows most exposed in B (default: every row)',
  '  --json               {"rank", "backendA", "backendB", "rows":[...], "unmatchedA", "unmatchedB",',
  '                       "exposedUsA", "exposedUsB", "culpritA", "culpritB"}; culprit: the rank the others wait',
  '                       for, per backend (ranks:[{rank, heldUpUs, collectives}], worst) — a straggler or jitter;',
  '                       from 64 ranks up the ranks it needs are simulated, or "note" says why it was not computed',
  `  --csv                the rows as CSV: ${DIFF_COLUMNS.join(', ')}`,
].join('\n');

/** --rank and --top: what each takes, for the messages of a missing value. */
const TOP_RULE: FlagRule = { kind: 'int', min: 1, max: 1e9 };
const DIFF_ALLOWED = { rank: 'an integer in [0, --ranks − 1]', top: describeRule(TOP_RULE) };

/** The table's "hides it in B" column is clipped (--json / --csv carry the whole text). */
const HIDES_WIDTH = 56;
const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

const us = (x: number | null | undefined) => formatDuration(x, { unit: 'µs', digits: 1, bare: true });

/** A culprit as `diff` shows it: `note` says why it was not computed. */
type ShownCulprit = Culprit & { readonly note?: string };

/** One line per backend naming the rank the others waited for, when one did (straggler, jitter). */
function culpritLines(culprits: readonly { backend: string; c: ShownCulprit }[]): string[] {
  return culprits
    .filter(({ c }) => c.ranks.length > 0 || c.note)
    .map(({ backend, c }) => {
      if (c.note) return `${backend}: the rank the others wait for: ${c.note}`;
      const [top] = c.ranks;
      const w = c.worst!;
      return (
        `${backend}: rank ${top.rank} holds the others up: they wait ${us(top.heldUpUs)} µs for it over ` +
        `${top.collectives} collectives; longest at ${w.collective} (${us(w.spreadUs)} µs), ` +
        `while it ran ${w.op ?? '?'}`
      );
    });
}

function formatDiff(d: BackendDiff, top: number | undefined, culprits: readonly string[]): string {
  const rows =
    top === undefined
      ? d.rows
      : [...d.rows].sort((x, y) => (y.b?.exposedUs ?? 0) - (x.b?.exposedUs ?? 0)).slice(0, top);
  const head = [
    'collective',
    'kind',
    'KiB',
    'bucket B',
    'start A',
    'exp A µs',
    'start B',
    'exp B µs',
    'hides it in B',
    'reason',
  ];
  const body = rows.map((r) => [
    r.name,
    r.kind,
    fixed(r.bytes / 1024, 0),
    r.b?.bucketId === null || r.b === null ? '' : `#${r.b.bucketId} (${r.b.bucketSize})`,
    us(r.a?.startUs),
    us(r.a?.exposedUs),
    us(r.b?.startUs),
    us(r.b?.exposedUs),
    clip(hidesInB(r), HIDES_WIDTH),
    r.reasons.map((x) => x.code).join(', '),
  ]);
  const right = new Set([2, 4, 5, 6, 7]);
  const summary =
    `rank ${d.rank}: ${d.rows.length} collectives; exposed ${formatDuration(d.exposedUsA)} under ${d.backendA}, ` +
    `${formatDuration(d.exposedUsB)} under ${d.backendB}` +
    (d.unmatchedA + d.unmatchedB ? `; unmatched: ${d.unmatchedA} in A, ${d.unmatchedB} in B` : '');
  const table = textTable(head, body, { left: (i) => !right.has(i), rule: true });
  return [summary, ...culprits, '', table].join('\n');
}

export async function diffCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseFlags('diff', argv, DIFF_OPTIONS, false, DIFF_ALLOWED);
  if (values.help) {
    io.out(DIFF_USAGE);
    return 0;
  }
  if (values.json && values.csv) throw new UsageError('fsdp-sim diff: give --json or --csv, not both');
  const cfg = configFromFlags('diff', values);
  const backends = parseBackends('diff', values.backends, [cfg.backendA, cfg.backendB]);
  if (backends.length !== 2)
    throw new UsageError(
      `fsdp-sim diff: --backends needs exactly two backends A,B, got ${backends.length} ('${values.backends}')`,
    );
  const rank = flagValue('diff', 'rank', { kind: 'int', min: 0, max: cfg.ranks - 1 }, values.rank ?? '0') as number;
  const top = values.top === undefined ? undefined : (flagValue('diff', 'top', TOP_RULE, values.top) as number);
  const graph = buildGraph(cfg);
  // the ranks the culprit compares (all below EMIT_ALL_BELOW; from there as many as it needs)
  const mesh = meshOfParallelism(cfg.ranks, cfg.parallelism);
  const plan = culpritPlan({
    worldSize: cfg.ranks,
    rank,
    nodes: graph.nodes.length,
    jitterPct: cfg.jitterPct,
    straggler: cfg.straggler.factor === 1 ? null : cfg.straggler.rank,
    oneDim: mesh.tp === 1 && mesh.dpReplicate === 1,
  });
  const emit = plan.emitRanks ? { emitRanks: [...plan.emitRanks] } : {};
  const [a, b] = backends.map((be) => runPipelineOnGraph(graph, cfg, be, emit));
  for (const r of [a, b]) {
    if (r.sim.mismatch) {
      io.err(`fsdp-sim diff: ${r.backend}: ${mismatchText(r.sim.mismatch)}`);
      return 1;
    }
  }
  const d = diffBackends(diffInputOf(a), diffInputOf(b), rank);
  const culprits = [a, b].map((r): { backend: string; c: ShownCulprit } => ({
    backend: r.backend,
    c: plan.skipped
      ? { ranks: [], worst: null, note: culpritSkipText(plan.skipped) }
      : findCulprit(r.sim.events, waitOfGraph(r.schedule.graph)),
  }));
  if (values.json) io.out(JSON.stringify({ ...wordedDiff(d), culpritA: culprits[0].c, culpritB: culprits[1].c }));
  else if (values.csv) io.out(diffCsv(d.rows, reasonText));
  else io.out(formatDiff(d, top, culpritLines(culprits)));
  return 0;
}
