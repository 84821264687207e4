// The sentence of a collective mismatch (a simulated hang) for the command line and the sweep's
// rows: what diverged, and the way out (why it happens: ranks planned from their own timings).

import type { SweepRow } from '../pipeline';
import type { CollectiveMismatch } from '../sim';
import { formatBytes } from '../util';

/** The size in a collective's descriptor (sim/streams.ts: '<kind> <bytes>B <dtype> [<members>]'). */
const DESCRIPTOR_BYTES_RE = /^(\S+) (\d+)B /;

/**
 * One rank's collective where the ranks diverged, as the simulator compares them ('all_gather
 * 234881024B bf16 [a, b]'), with its size in the one bytes text: 'all_gather 224.00 MiB bf16 [a, b]'.
 */
export function mismatchOpText(desc: string): string {
  return desc.replace(DESCRIPTOR_BYTES_RE, (_m, kind: string, b: string) => `${kind} ${formatBytes(Number(b))} `);
}

/** One line: `collective mismatch at collective #3: rank 0 issued … but rank 7 issued …; …`. */
export function mismatchText(m: CollectiveMismatch): string {
  return (
    `collective mismatch at collective #${m.seq}: rank ${m.ranks[0]} issued ${mismatchOpText(m.ops[0])} but ` +
    `rank ${m.ranks[1]} issued ${mismatchOpText(m.ops[1])}; on real GPUs this step hangs. ` +
    'Ranks planned from their own timings: turn alignment on (--alignment on) or set --jitter-pct 0'
  );
}

/** A sweep row as `sweep --json` gives it: a hang as `error`, its sentence. */
export function wordedSweepRow(r: SweepRow) {
  const { hang, ...rest } = r;
  return hang ? { ...rest, error: mismatchText(hang) } : rest;
}
