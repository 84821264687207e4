// The notes of a calibration: each group size the fit assumed where the trace was silent
// (pipeline/calibrate_resolve.ts SizeAssumption), in one sentence naming the trace's fields.

import type { Calibration, SizeAssumption } from '../pipeline';

export function assumptionText(a: SizeAssumption): string {
  if (a.from === 'config') return `group '${a.group}': no 'Group size' in the trace, n = ${a.n} from the config`;
  return (
    `group '${a.group}': the trace records no process group or 'Group size'; taken as the world ` +
    `(distributedInfo.world_size = ${a.n}), c10d's default process group`
  );
}

/** A calibration as `calibrate --json` gives it: its notes as sentences. */
export const wordedCalibration = (c: Calibration) => ({ ...c, notes: c.notes.map(assumptionText) });
