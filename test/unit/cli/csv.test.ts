// The CLI's CSV (sweep --csv, diff --csv) is d3-dsv's: read back with csvParse it gives the JSON's
// rows, cells with commas, quotes and spaces intact.
import { csvParse } from 'd3';
import { describe, expect, it } from 'vitest';
import { DIFF_COLUMNS, hidesInB, type DiffRow } from '../../../src/pipeline/diff';
import { SWEEP_COLUMNS } from '../../../src/pipeline/sweep';
import { cli } from './run_cli';

describe('CSV through d3-dsv', () => {
  it('diff --csv reads back as the JSON rows, the "hides it in B" text whole', async () => {
    const args = ['diff', '--ranks', '4', '--straggler-rank', '1', '--straggler-factor', '2'];
    const csv = csvParse((await cli([...args, '--csv'])).out);
    const json = JSON.parse((await cli([...args, '--json'])).out) as { rows: DiffRow[] };
    expect(csv.columns).toEqual([...DIFF_COLUMNS]);
    expect(csv.map((r) => r.name)).toEqual(json.rows.map((r) => r.name));
    expect(csv.map((r) => r.hidesInB)).toEqual(json.rows.map(hidesInB));
    // the cells that need quoting are there (a comma-separated list of what hides a collective)
    expect(csv.some((r) => r.hidesInB?.includes(','))).toBe(true);
    expect(csv.map((r) => Number(r.bytes))).toEqual(json.rows.map((r) => r.bytes));
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
