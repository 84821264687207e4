// How a collective mismatch is reported outside the simulator: one JSON shape, shared by the CLI
// (compare, pass) so a simulated hang is an error everywhere, never a step time. Its sentence is
// src/words/ `mismatchText`; the app's banner words the same facts (ui/panels/banners.tsx).

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
