// Every figure a table of README.md or docs/*.md shows comes from a command the doc names. The
// comment right above the table says where its figures come from:
//   <!-- table: CMD -->     this test runs CMD and compares the table with its output, cell by
//                           cell, formatted as src/util formats it. `{col}` in CMD is the row's
//                           cell in column col (`—` for nothing): each row is its own command.
//   <!-- measured: … -->    machine-dependent medians (benchmarks): its `command` column names the
//                           `npm run bench` section that prints each row; nothing is compared.
// `<!-- output: CMD -->` above a fenced block: the block is CMD's output, verbatim.
// Columns that name or pick a row (LABELS, `backend`, ...) are not figures; a column whose name
// starts with `published` quotes the source the doc links, and is only used for the ratio beside
// fsdp-sim's figure. A table with a figure and no such comment fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixed, GIB } from '../../../src/util';
import { docFiles, outputBlocks, readDoc, ROOT, runLine, type Table, tables } from './markdown';
import { fixturePath } from '../../helpers/fixtures';

type Cells = Readonly<Record<string, string>>;

/** Columns that name a row or feed its command, never figures. */
const LABELS = new Set(['flags', 'PR #1881 row', 'PR #2961 row', 'PR #3429 row', 'run', 'step']);
const isCited = (column: string) => column.startsWith('published ');

/** A cell that is a figure: a number, with a unit or a sign at most. */
const FIGURE = /^[~≈<>≥≤+−-]?\s*\d[\d,.]*\s*(%|ms|s|µs|GiB|MiB|GB|MB|×)?$/;

/** docs/ARCHITECTURE.md's tables name layers and files (the project's map): no figures to check. */
const NO_FIGURES = new Set(['docs/ARCHITECTURE.md']);

const outputs = new Map<string, string>();
/** CMD's stdout; each command runs once per test file. */
function output(command: string): string {
  let out = outputs.get(command);
  if (out === undefined) {
    const r = runLine(command, 120_000);
    if (r.status !== 0) throw new Error(`${command} exited ${r.status}\n${r.stderr}`);
    out = r.stdout;
    outputs.set(command, out);
  }
  return out;
}

const gib = (bytes: number) => fixed(bytes / GIB, 2);
const tok = (x: number) => Math.round(x).toLocaleString('en-US');
/** fsdp-sim's figure, and its ratio to the published one when there is one: '6,959 (0.96×)'. */
function withRatio(text: string, value: number, published: string | undefined): string {
  const p = Number((published ?? '').replace(/,/g, ''));
  return published === undefined || !Number.isFinite(p) || published === '—' || published === ''
    ? text
    : `${text} (${fixed(value / p, 2)}×)`;
}

interface CompareResult {
  readonly backend: string;
  readonly stepTimeMs: number;
  readonly exposedCommMs: number;
  readonly overlapPct: number;
  readonly peakMemoryBytes: number;
  readonly peakAllocatedBytes: number;
  readonly peakReservedBytes: number;
  readonly tokensPerSecPerGpu: number;
  readonly collectives: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly collectivesTotal: Readonly<Record<string, number>>;
  readonly exposedCommMsByGroup: Readonly<Record<string, number>>;
}
interface CompareOut {
  readonly mesh: {
    readonly dp_replicate: number;
    readonly dp_shard: number;
    readonly tp: number;
    readonly ep?: number;
  };
  readonly results: readonly CompareResult[];
}

function meshText({ dp_replicate: r, dp_shard: s, tp, ep }: CompareOut['mesh']): string {
  const fsdp = r > 1 ? `HSDP ${r} × ${s}` : `FSDP ${s}`;
  const dense = tp > 1 ? `${fsdp} × TP ${tp}` : fsdp;
  return ep !== undefined && ep > 1 ? `${dense} × EP ${ep}` : dense;
}

const KIND_SHORT: readonly (readonly [string, string])[] = [
  ['all_gather', 'AG'],
  ['reduce_scatter', 'RS'],
  ['all_reduce', 'AR'],
];
/** 'dp_shard: 302 AG, 323 RS; tp: 482 AG, 402 RS, 161 AR' (kinds with no launch left out). */
function perGroupText(c: CompareResult['collectives']): string {
  return Object.entries(c)
    .map(([g, k]) => {
      const launches = KIND_SHORT.filter(([kind]) => k[kind] > 0).map(([kind, short]) => `${k[kind]} ${short}`);
      return `${g}: ${launches.join(', ')}`;
    })
    .join('; ');
}

const SUM_OF_GROUPS = 'sum of the groups';

/** A row per process group (and their sum): exposed ms under aot_eager, under autobucketing, and the difference. */
function compareGroupCells(o: CompareOut, group: string): Record<string, string> {
  const side = (b: string) => {
    const r = o.results.find((x) => x.backend === b);
    if (!r) throw new Error(`no ${b} in the output`);
    const by = r.exposedCommMsByGroup;
    return group === SUM_OF_GROUPS ? Object.values(by).reduce((a, x) => a + x, 0) : by[group];
  };
  const a = side('aot_eager');
  const b = side('aot_eager_autobucketing');
  return { 'baseline: exposed': fixed(a, 1), 'bucketed: exposed': fixed(b, 1), hidden: fixed(a - b, 1) };
}

function compareCells(out: string, doc: Cells): Record<string, string> {
  const o = JSON.parse(out) as CompareOut;
  if ('group' in doc) return compareGroupCells(o, doc.group);
  const r = o.results.find((x) => x.backend === doc.backend);
  if (!r) throw new Error(`no ${doc.backend} in the output`);
  return {
    'step ms': fixed(r.stepTimeMs, 2),
    'exposed comm ms': fixed(r.exposedCommMs, 2),
    'overlap %': fixed(r.overlapPct, 1),
    'peak GiB': gib(r.peakMemoryBytes),
    'alloc GiB': gib(r.peakAllocatedBytes),
    'reserved GiB': gib(r.peakReservedBytes),
    'tok/s/GPU': tok(r.tokensPerSecPerGpu),
    '#AG': String(r.collectivesTotal.all_gather),
    '#RS': String(r.collectivesTotal.reduce_scatter),
    mesh: meshText(o.mesh),
    'collectives per group': perGroupText(r.collectives),
    'fsdp-sim tok/s/GPU': withRatio(tok(r.tokensPerSecPerGpu), r.tokensPerSecPerGpu, doc['published tok/s/GPU']),
    'fsdp-sim reserved GiB': withRatio(
      gib(r.peakReservedBytes),
      r.peakReservedBytes / GIB,
      doc['published memory GiB'],
    ),
    'fsdp-sim alloc GiB': gib(r.peakAllocatedBytes),
    'fsdp-sim step ms': fixed(r.stepTimeMs, 0),
  };
}

/** The rows a whole compare table lists, in order: each backend, or each group and their sum. */
function compareRows(out: string, head: readonly string[]): Cells[] {
  const o = JSON.parse(out) as CompareOut;
  if (head.includes('group')) {
    return [...Object.keys(o.results[0].exposedCommMsByGroup), SUM_OF_GROUPS].map((group) => ({ group }));
  }
  return o.results.map((r) => ({ backend: r.backend }));
}

interface RankFigures {
  readonly overlapPct: number;
  readonly idlePct: number;
  readonly computePct: number;
  readonly nonComputePct: number;
  readonly spanUs: number;
}
/** HTA's own figures for its sample, as HTA computed them (the file the doc names). */
function htaExpected(): Readonly<Record<string, RankFigures>> {
  return JSON.parse(readFileSync(fixturePath('hta/expected.json'), 'utf8')).trace_filter.ranks;
}

function analyzeCells(out: string, doc: Cells): Record<string, string> {
  const ranks = (JSON.parse(out) as { ranks: (RankFigures & { rank: number })[] }).ranks;
  const f = doc.source === 'HTA' ? htaExpected()[doc.rank] : ranks.find((r) => String(r.rank) === doc.rank);
  if (!f) throw new Error(`no rank ${doc.rank} from ${doc.source}`);
  return {
    'overlap %': fixed(f.overlapPct, 2),
    'idle %': fixed(f.idlePct, 2),
    'compute %': fixed(f.computePct, 2),
    'non-compute %': fixed(f.nonComputePct, 2),
    'span µs': String(f.spanUs),
  };
}

function analyzeRows(out: string): Cells[] {
  return (JSON.parse(out) as { ranks: { rank: number }[] }).ranks.flatMap((r) =>
    ['HTA', 'fsdp-sim'].map((source) => ({ rank: String(r.rank), source })),
  );
}

/** The loss at each step a column names ('1', '10', ...), to 3 decimals. */
function trainCells(out: string): Record<string, string> {
  const losses = (JSON.parse(out) as { losses: number[] }).losses;
  return Object.fromEntries(losses.map((l, i) => [String(i + 1), fixed(l, 3)]));
}

interface Renderer {
  /** Columns that pick the row: matched to the output, never compared as figures. */
  readonly keys: readonly string[];
  /** Every figure cell the output gives for the doc's row, by column (a superset of the table's). */
  readonly cells: (out: string, doc: Cells) => Record<string, string>;
  /** The key cells of every row the output has, in order: a whole table lists exactly these. */
  readonly rows: (out: string, head: readonly string[]) => Cells[];
}

/** By the CLI command (`compare`, `analyze`, `train`) a table's comment names. */
const RENDERERS: Readonly<Record<string, Renderer>> = {
  compare: { keys: ['backend', 'group'], cells: compareCells, rows: compareRows },
  analyze: { keys: ['rank', 'source'], cells: analyzeCells, rows: analyzeRows },
  train: { keys: ['step'], cells: trainCells, rows: () => [{ step: 'loss' }] },
};

const PLACEHOLDER = /\{([^}]+)\}/g;
const HAS_PLACEHOLDER = /\{[^}]+\}/;
/** The row's command: each `{col}` replaced by the row's cell (`—` for none), spaces collapsed. */
function commandFor(template: string, row: Cells): string {
  return template
    .replace(PLACEHOLDER, (_, col: string) => (row[col] === '—' ? '' : (row[col] ?? `{${col}}`)))
    .replace(/\s+/g, ' ')
    .trim();
}

function checkTable(t: Table): void {
  const template = t.marker!.text;
  const sub = /^npm run -s sim -- (\w+) /.exec(template)?.[1] ?? '';
  const r = RENDERERS[sub];
  expect(r, `${t.file}:${t.line}: no renderer for '${sub}' (${template})`).toBeDefined();
  const figures = t.head.filter((c) => !LABELS.has(c) && !isCited(c) && !r.keys.includes(c));
  if (!HAS_PLACEHOLDER.test(template)) {
    const keys = t.head.filter((c) => r.keys.includes(c));
    const pick = (row: Cells) => Object.fromEntries(keys.map((k) => [k, row[k]]));
    expect(t.rows.map(pick), `${t.file}:${t.line}: the rows of ${template}`).toEqual(
      r.rows(output(template), t.head).map(pick),
    );
  }
  for (const row of t.rows) {
    const command = commandFor(template, row);
    const want = r.cells(output(command), row);
    const missing = figures.filter((c) => !(c in want));
    expect(missing, `${t.file}:${t.line}: columns ${command} does not give`).toEqual([]);
    const pick = (cells: Cells) => Object.fromEntries(figures.map((c) => [c, cells[c]]));
    expect(pick(row), `${t.file}:${t.line}: ${command}`).toEqual(pick(want));
  }
}

/** The `--only` sections bench/run.ts knows. */
function benchSections(): string[] {
  const src = readFileSync(join(ROOT, 'bench/run.ts'), 'utf8');
  const list = /const SECTIONS = \[([^\]]*)\]/.exec(src)?.[1] ?? '';
  return [...list.matchAll(/'(\w+)'/g)].map((m) => m[1]);
}

const all = docFiles().flatMap(tables);

describe('the docs’ tables', () => {
  it('mark every table of figures with where its figures come from', () => {
    const unmarked = all
      .filter((t) => !NO_FIGURES.has(t.file) && t.marker === null)
      .filter((t) => t.rows.some((row) => Object.values(row).some((c) => FIGURE.test(c))));
    expect(unmarked.map((t) => `${t.file}:${t.line}`)).toEqual([]);
    const kinds = all.filter((t) => t.marker).map((t) => t.marker!.kind);
    expect(kinds.filter((k) => k !== 'table' && k !== 'measured')).toEqual([]);
  });

  it('name, for each measured figure, the npm run bench section that prints it', () => {
    const sections = benchSections();
    expect(sections).toContain('sweep');
    const measured = all.filter((t) => t.marker?.kind === 'measured');
    expect(measured.length).toBeGreaterThan(0);
    for (const t of measured) {
      expect(t.head, `${t.file}:${t.line}`).toContain('command');
      for (const row of t.rows) {
        const only = /^npm run bench -- --only (\w+)(?: --torch-profile 2\.1[1-5]| --full| --adapters [\w,]+)*$/.exec(
          row.command,
        );
        expect(only?.[1], `${t.file}:${t.line}: ${row.command}`).toBeOneOf(sections);
      }
    }
  });

  it('show each table’s and output’s command where a reader sees it, not only in the comment', () => {
    const visible = (file: string) =>
      readDoc(file)
        .replace(/<!--[\s\S]*?-->/g, '')
        .replace(/\s+/g, ' ');
    const hidden = [
      ...all.filter((t) => t.marker?.kind === 'table').map((t) => ({ file: t.file, command: t.marker!.text })),
      ...docFiles().flatMap((file) => outputBlocks(file).map((b) => ({ file, command: b.command }))),
    ].filter(({ file, command }) => {
      const base = command
        .replace(PLACEHOLDER, '')
        .replace(/ --json$/, '')
        .replace(/\s+/g, ' ')
        .trim();
      return !visible(file).includes(base);
    });
    expect(hidden).toEqual([]);
  });

  for (const t of all.filter((x) => x.marker?.kind === 'table')) {
    it(`${t.file}:${t.line}: ${t.marker!.text}`, () => checkTable(t), 240_000);
  }

  for (const file of docFiles()) {
    for (const b of outputBlocks(file)) {
      it(`${file}:${b.line}: the output of ${b.command}`, () => {
        const lines = output(b.command)
          .split('\n')
          .map((l) => l.trimEnd());
        while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
        expect(b.text).toBe(lines.join('\n'));
      }, 120_000);
    }
  }
});
