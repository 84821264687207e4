// `fsdp-sim sweep` in process: the JSON / CSV / table shapes, and usage errors (exit 2, one line).
import { describe, expect, it } from 'vitest';
import { cli } from '../../helpers/cli';

describe('fsdp-sim sweep', () => {
  it('prints one JSON row per point and backend, the cross product in order', async () => {
    const r = await cli(['sweep', '--vary', 'ranks=2,4', '--vary', 'autobucketing.max_in_flight_gb=0:1:1', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { axes: { path: string; values: string[] }[]; rows: Record<string, unknown>[] };
    expect(j.axes).toEqual([
      { path: 'ranks', values: ['2', '4'] },
      { path: 'autobucketing.max_in_flight_gb', values: ['0', '1'] },
    ]);
    expect(j.rows).toHaveLength(8);
    expect(j.rows.map((x) => [(x.values as Record<string, number>).ranks, x.backend])).toEqual([
      [2, 'aot_eager'],
      [2, 'aot_eager_autobucketing'],
      [2, 'aot_eager'],
      [2, 'aot_eager_autobucketing'],
      [4, 'aot_eager'],
      [4, 'aot_eager_autobucketing'],
      [4, 'aot_eager'],
      [4, 'aot_eager_autobucketing'],
    ]);
    expect(Object.keys(j.rows[0]).sort()).toEqual([
      'allGathers',
      'backend',
      'exposedCommMs',
      'fitsHbm',
      'overlapPct',
      'peakMemoryBytes',
      'peakReservedBytes',
      'point',
      'reduceScatters',
      'stepTimeMs',
      'values',
    ]);
  });

  it('prints CSV and a table with the varied fields first', async () => {
    const csv = await cli(['sweep', '--vary', 'seed=1,2', '--backends', 'transformer_block', '--csv']);
    expect(csv.code).toBe(0);
    const lines = csv.out.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0].startsWith('seed,backend,stepTimeMs')).toBe(true);
    expect(lines[1].startsWith('1,transformer_block,')).toBe(true);
    const table = await cli(['sweep', '--vary', 'hardware=h100,a100', '--backends', 'aot_eager']);
    expect(table.out.split('\n')[0]).toMatch(/^hardware\s+backend\s+step ms\s+exposed ms/);
    expect(table.out).toMatch(/\na100\s+aot_eager\s+\d/);
  });

  it('names the field and the allowed values on a bad --vary (exit 2)', async () => {
    const unknown = await cli(['sweep', '--vary', 'rank=8']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^fsdp-sim sweep: --vary field must be one of \[model, ranks, .*\], got "rank"$/);
    const bad = await cli(['sweep', '--vary', 'ranks=8,0']);
    expect([bad.code, bad.err]).toEqual([2, 'fsdp-sim sweep: ranks must be an integer in [1, 1024], got "0"']);
    const none = await cli(['sweep', '--model', 'tiny']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/give at least one --vary/);
    const both = await cli(['sweep', '--vary', 'ranks=2', '--json', '--csv']);
    expect(both.err).toMatch(/--json or --csv, not both/);
    const backend = await cli(['sweep', '--vary', 'ranks=2', '--backends', 'eager']);
    expect(backend.err).toMatch(/--backends entries must be one of \[aot_eager, /);
  });
});
