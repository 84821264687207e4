// Text output of the CLI: fixed-width tables (one layout for every command) and the compare table.

import { hbmFit } from '../config';
import type { HardwareName } from '../estimate';
import type { TraceMetrics } from '../trace';
import { GIB, fixed, gibText } from '../util';

export interface CompareRow {
  readonly backend: string;
  readonly stepTimeMs: number;
  readonly exposedCommMs: number;
  readonly overlapPct: number;
  readonly peakMemoryBytes: number;
  readonly collectives: { readonly all_gather: number; readonly reduce_scatter: number };
  /** The caching allocator's peaks and tokens/s per GPU (pipeline/figures.ts), when computed. */
  readonly peakAllocatedBytes?: number;
  readonly peakReservedBytes?: number;
  readonly tokensPerSecPerGpu?: number;
}

/** Which columns a textTable pads on the right (text); the rest are right-aligned (figures). */
type LeftAligned = (column: number) => boolean;

/**
 * A fixed-width text table: each column as wide as its widest cell, two spaces apart, trailing
 * spaces trimmed; `left` columns are left-aligned (default: the first), and `rule` puts a line of
 * dashes under the header.
 */
export function textTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  { left = (i: number) => i === 0, rule = false }: { left?: LeftAligned; rule?: boolean } = {},
): string {
  const widths = head.map((h, i) => rows.reduce((m, r) => Math.max(m, r[i].length), h.length));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  const dashes = rule ? [widths.map((w) => '-'.repeat(w)).join('  ')] : [];
  return [line(head), ...dashes, ...rows.map(line)].join('\n');
}

export function rowOf(backend: string, m: TraceMetrics): CompareRow {
  return {
    backend,
    stepTimeMs: m.stepTimeUs / 1000,
    exposedCommMs: m.exposedCommUs / 1000,
    overlapPct: m.overlapPct,
    peakMemoryBytes: m.peakMemoryBytes,
    collectives: { all_gather: m.collectives.all_gather, reduce_scatter: m.collectives.reduce_scatter },
  };
}

/**
 * A fixed-width table: backend, step ms, exposed comm ms, overlap %, peak live tensors GiB, (with the
 * allocator figures: peak allocated GiB, peak reserved GiB, tok/s/GPU), #AG, #RS, and with `hardware`
 * a last column saying whether peak reserved (else peak live tensors) fits the preset's HBM
 * (`fits 79.2 GiB HBM`). The memory names are the app's (src/ui/glossary.ts MEMORY_NAMES).
 */
export function formatTable(rows: readonly CompareRow[], hardware?: HardwareName): string {
  const figures =
    rows.length > 0 && rows.every((r) => r.peakReservedBytes !== undefined && r.tokensPerSecPerGpu !== undefined);
  const head = [
    'backend',
    'step ms',
    'exposed comm ms',
    'overlap %',
    'peak live tensors GiB',
    ...(figures ? ['peak allocated GiB', 'peak reserved GiB', 'tok/s/GPU'] : []),
    '#AG',
    '#RS',
  ];
  const hbm = hardware === undefined ? undefined : hbmFit(0, hardware).hbmBytes;
  if (hbm !== undefined) head.push(`fits ${gibText(hbm, 1)} HBM`);
  const body = rows.map((r) => [
    r.backend,
    fixed(r.stepTimeMs, 2),
    fixed(r.exposedCommMs, 2),
    fixed(r.overlapPct, 1), // NaN (MISSING): no communication time (HTA's 0/0)
    fixed(r.peakMemoryBytes / GIB, 2),
    ...(figures
      ? [
          fixed(r.peakAllocatedBytes! / GIB, 2),
          fixed(r.peakReservedBytes! / GIB, 2),
          Math.round(r.tokensPerSecPerGpu!).toLocaleString('en-US'),
        ]
      : []),
    String(r.collectives.all_gather),
    String(r.collectives.reduce_scatter),
    ...(hardware === undefined ? [] : [hbmFit(r.peakReservedBytes ?? r.peakMemoryBytes, hardware).fits ? 'yes' : 'NO']),
  ]);
  return textTable(head, body, { rule: true });
}

/**
 * Control characters (C0 but newline and tab, DEL, C1) and Unicode bidi / line controls, as in a
 * name an input file chose: what `printable` escapes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` safe to print on a terminal: every control character a file could put in a name (an
 * escape sequence, a carriage return, a bidi override) written as `\x1b` / `\u202e`. The one
 * helper for file-derived text: main() passes everything it prints through it.
 */
export const printable = (text: string): string =>
  text.replace(CONTROL, (c) => {
    const n = c.charCodeAt(0);
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
