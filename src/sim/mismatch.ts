// How a collective mismatch is reported outside the simulator: one JSON shape and one sentence,
// shared by the CLI (compare, pass) so a simulated hang is an error everywhere, never a step time.
// The app's banner words the same facts (ui/panels/banners.tsx).

import type { CollectiveMismatch } from './sim_types';

/** The JSON form: `{"error": {"kind": "collective_mismatch", ranks, seq, descriptors}}`. */
export interface MismatchReport {
  readonly kind: 'collective_mismatch';
  readonly ranks: readonly [number, number];
  readonly seq: number;
  /** What each of the two ranks issued at `seq` (`nothing (...)` when one never arrived). */
  readonly descriptors: readonly [string, string];
}

export function mismatchReport(m: CollectiveMismatch): MismatchReport {
  return { kind: 'collective_mismatch', ranks: m.ranks, seq: m.seq, descriptors: m.ops };
}

/** One line: what diverged, and the way out (why it happens: ranks planned from their own timings). */
export function describeMismatch(m: CollectiveMismatch): string {
  return (
    `collective mismatch at collective #${m.seq}: rank ${m.ranks[0]} issued ${m.ops[0]} but rank ${m.ranks[1]} ` +
    `issued ${m.ops[1]}; on real GPUs this step hangs. Ranks planned from their own timings: ` +
    'turn alignment on (--alignment on) or set --jitter-pct 0'
  );
}
