// The CLI's CSV (sweep --csv, diff --csv) is d3-dsv's: read back with csvParse it gives the JSON's
// rows cell for cell, cells with commas, quotes and spaces intact.
import { csvParse } from 'd3-dsv';
import { describe, expect, it } from 'vitest';
import { DIFF_COLUMNS, diffCells, type DiffRow } from '../../../src/pipeline/diff';
import { SWEEP_COLUMNS } from '../../../src/pipeline/sweep';
import { cli } from '../../helpers/cli';

describe('CSV through d3-dsv', () => {
  it('diff --csv reads back cell for cell as the JSON rows, quoted cells whole', async () => {
    const args = ['diff', '--ranks', '4', '--straggler-rank', '1', '--straggler-factor', '2'];
    const text = (await cli([...args, '--csv'])).out;
    const csv = csvParse(text);
    // the JSON rows carry each reason worded: {code, text}
    type JsonRow = Omit<DiffRow, 'reasons'> & { reasons: { code: string; text: string }[] };
    const json = JSON.parse((await cli([...args, '--json'])).out) as { rows: JsonRow[] };
    expect(csv.columns).toEqual([...DIFF_COLUMNS]);
    expect(csv).toHaveLength(json.rows.length);
    const cell = (v: unknown) => (v === null ? '' : String(v));
    csv.forEach((row, i) => {
      const want = { ...diffCells({ ...json.rows[i], reasons: [] }, () => ''), reason: '' };
      want.reason = json.rows[i].reasons.map((x) => x.text).join(' ');
      for (const c of DIFF_COLUMNS) expect(row[c], `${json.rows[i].name} ${c}`).toBe(cell(want[c]));
    });
    // some cells needed quoting (sentences with commas): they came back whole
    expect(text).toContain('"');
  });

  it('sweep --csv has one column per --vary field, then the figures; a missing figure is empty', async () => {
    const r = await cli(['sweep', '--vary', 'ranks=2,4', '--backends', 'aot_eager', '--csv']);
    expect(r.code).toBe(0);
    const csv = csvParse(r.out);
    expect(csv.columns).toEqual(['ranks', ...SWEEP_COLUMNS]);
    expect(csv.map((x) => [x.ranks, x.backend, x.error])).toEqual([
      ['2', 'aot_eager', ''],
      ['4', 'aot_eager', ''],
    ]);
    for (const x of csv) expect(Number(x.stepTimeMs)).toBeGreaterThan(0);
  });
});
