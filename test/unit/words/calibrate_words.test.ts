// The notes of a calibration (the group sizes it assumed), worded, and `calibrate --json`'s form.
import { describe, expect, it } from 'vitest';
import type { Calibration } from '../../../src/pipeline';
import { assumptionText, wordedCalibration } from '../../../src/words';

describe('assumptionText', () => {
  it('says where a group size the trace did not record came from', () => {
    expect(assumptionText({ group: 'dp', n: 4, from: 'config' }))
      .toBe("group 'dp': no 'Group size' in the trace, n = 4 from the config");
    expect(assumptionText({ group: 'default', n: 128, from: 'world' })).toBe(
      "group 'default': the trace records no process group or 'Group size'; taken as the world " +
        "(distributedInfo.world_size = 128), c10d's default process group",
    );
  });

  it('gives the JSON its notes as sentences, the rest as it is', () => {
    const c: Calibration = {
      groups: [], unfitted: [], notes: [{ group: 'dp', n: 4, from: 'config' }], scales: [], skipped: 0, warnings: [],
    };
    expect(wordedCalibration(c)).toEqual({ ...c, notes: [assumptionText(c.notes[0])] });
  });
});
