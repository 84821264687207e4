// `fsdp-sim diff` in process: JSON rows for every collective, CSV, the top-exposed table and usage errors.
import { describe, expect, it } from 'vitest';
import { cli } from '../../helpers/cli';
import { defaultConfig } from '../../../src/config';
import { buildGraph } from '../../../src/pipeline';
import { DIFF_COLUMNS } from '../../../src/pipeline/diff';

describe('fsdp-sim diff', () => {
  it('prints a JSON row for every collective of the chosen rank', async () => {
    const r = await cli(['diff', '--ranks', '8', '--rank', '5', '--json']);
    expect([r.code, r.err]).toEqual([0, '']);
    const j = JSON.parse(r.out) as {
      rank: number;
      rows: { name: string; b: { exposedUs: number } }[];
      unmatchedA: number;
    };
    const colls = buildGraph({ ...defaultConfig(), ranks: 8 }).nodes.filter((n) => n.collective);
    expect(j.rank).toBe(5);
    expect(j.unmatchedA).toBe(0);
    expect(j.rows.map((x) => x.name)).toEqual(colls.map((n) => n.name));
  });

  it('prints CSV, and a table of the K most exposed in B', async () => {
    const csv = await cli(['diff', '--csv']);
    expect(csv.out.split('\n')[0]).toBe(DIFF_COLUMNS.join(','));
    const j = JSON.parse((await cli(['diff', '--json'])).out) as {
      rows: { name: string; b: { exposedUs: number } }[];
    };
    const worst = [...j.rows].sort((x, y) => y.b.exposedUs - x.b.exposedUs)[0];
    const t = await cli(['diff', '--top', '3']);
    const lines = t.out.split('\n');
    const dur = String.raw`\d+(\.\d+)? (µs|ms|s)`;
    expect(lines[0]).toMatch(
      new RegExp(`^rank 0: \\d+ collectives; exposed ${dur} under aot_eager, ${dur} under aot_eager_autobucketing$`),
    );
    expect(lines[0]).not.toMatch(/\d{5,}/); // a large total in ms or s, not 176649.8 µs
    expect(lines).toHaveLength(4 + 3);
    expect(lines[4].startsWith(worst.name)).toBe(true);
  });

  it('names the rank the others wait for in a straggler run, and no one in a symmetric run', async () => {
    const args = ['diff', '--straggler-rank', '2', '--straggler-factor', '2'];
    const t = await cli(args);
    const line = t.out.split('\n')[1];
    expect(line).toMatch(/^aot_eager: rank 2 holds the others up: they wait [\d.]+ µs for it over \d+ /);
    const j = JSON.parse((await cli([...args, '--json'])).out) as { culpritB: { ranks: { rank: number }[] } };
    expect(j.culpritB.ranks[0].rank).toBe(2);
    const sym = JSON.parse((await cli(['diff', '--json'])).out) as { culpritA: { ranks: unknown[]; worst: unknown } };
    expect(sym.culpritA).toEqual({ ranks: [], worst: null });
  });

  it('rejects a wrong number of backends and a rank outside the world (exit 2)', async () => {
    const three = await cli(['diff', '--backends', 'aot_eager,transformer_block,aot_eager_autobucketing']);
    expect(three.code).toBe(2);
    expect(three.err).toMatch(/--backends needs exactly two backends A,B, got 3/);
    const rank = await cli(['diff', '--rank', '4']);
    expect([rank.code, rank.err]).toEqual([2, 'fsdp-sim diff: --rank must be an integer in [0, 3], got "4"']);
  });
});
