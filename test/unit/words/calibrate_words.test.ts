// The words of a calibration: the group sizes it assumed, why it left a collective or a group out
// (the engine's codes and facts), and `calibrate --json`'s form.
import { describe, expect, it } from 'vitest';
import type { Calibration } from '../../../src/pipeline';
import { assumptionText, unfittedText, wordedCalibration } from '../../../src/words';
import { leftOutText } from '../../../src/words/calibrate_words';

describe('assumptionText', () => {
  it('says where a group size the trace did not record came from', () => {
    expect(assumptionText({ group: 'dp', n: 4, from: 'config' })).toBe(
      "group 'dp': no 'Group size' in the trace, n = 4 from the config",
    );
    expect(assumptionText({ group: 'default', n: 128, from: 'world' })).toBe(
      "group 'default': the trace records no process group or 'Group size'; taken as the world " +
        "(distributedInfo.world_size = 128), c10d's default process group",
    );
  });

  it('gives the JSON its notes, kinds and reasons as text, the rest as it is, in the same key order', () => {
    const c: Calibration = {
      groups: [],
      unfitted: [
        {
          group: 'dp',
          groupSize: 4,
          kinds: [
            { kind: 'all_reduce', count: 8 },
            { kind: 'all_gather', count: 4 },
          ],
          samples: 12,
          reason: { code: 'singular' },
        },
      ],
      notes: [{ group: 'dp', n: 4, from: 'config' }],
      scales: [],
      skipped: 0,
      warnings: [],
    };
    const w = wordedCalibration(c);
    expect(w).toEqual({
      ...c,
      unfitted: [
        { ...c.unfitted[0], kinds: 'all_reduce ×8, all_gather ×4', reason: leftOutText(c.unfitted[0].reason) },
      ],
      notes: [assumptionText(c.notes[0])],
    });
    expect(JSON.stringify(w)).toBe(
      '{"groups":[],"unfitted":[{"group":"dp","groupSize":4,"kinds":"all_reduce ×8, all_gather ×4","samples":12,' +
        '"reason":"its collectives give a singular fit (sizes too close)"}],' +
        `"notes":[${JSON.stringify(assumptionText(c.notes[0]))}],"scales":[],"skipped":0,"warnings":[]}`,
    );
  });
});

describe('leftOutText and unfittedText', () => {
  it("word the engine's reasons with the facts they carry", () => {
    expect(leftOutText({ code: 'bad_count', field: 'In msg nelems', value: '"100"' })).toBe(
      `its 'In msg nelems' is "100", not a whole number in [0, 2^53)`,
    );
    expect(leftOutText({ code: 'group_size_over', n: 64, most: 4, world: true })).toBe(
      "its 'Group size' is 64, more than the trace's world_size (4)",
    );
    expect(leftOutText({ code: 'group_size_over', n: 70000, most: 65536, world: false })).toBe(
      "its 'Group size' is 70000, more than the 65536 ranks a trace can name",
    );
    expect(leftOutText({ code: 'no_group', world: false })).toBe(
      "no 'Group size' or 'Process Group Name' in the trace, and no distributedInfo.world_size",
    );
    expect(leftOutText({ code: 'no_group', world: true })).toBe("no 'Group size' or 'Process Group Name' in the trace");
    expect(leftOutText({ code: 'bad_bytes', bytes: Number.NaN })).toBe('its size (NaN B) is not a finite number ≥ 0');
    expect(leftOutText({ code: 'one_size', samples: 3, bytes: 16_777_216 })).toBe(
      'its 3 collective(s) all move 16.0 MiB: with one size α and β cannot be told apart; ' +
        'profile steps with collectives of different sizes',
    );
    expect(leftOutText({ code: 'no_growth', lo: { bytes: 1e6, durUs: 900 }, hi: { bytes: 1e8, durUs: 300 } })).toMatch(
      /^their durations do not grow with size \(1\.0 MiB took 900\.0 µs, 95\.4 MiB 300\.0 µs\), so no/,
    );
  });

  it('say the group, its kinds and size, then the reason', () => {
    const kinds = [{ kind: 'send_recv', count: 2 }];
    const u = { group: '0', kinds, samples: 2, reason: { code: 'no_ring' } } as const;
    expect(unfittedText(u)).toBe(`group '0' (send_recv ×2): ${leftOutText(u.reason)}`);
    expect(unfittedText({ ...u, groupSize: 8 })).toBe(`group '0' (send_recv ×2, n = 8): ${leftOutText(u.reason)}`);
  });
});
