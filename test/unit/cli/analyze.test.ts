// `fsdp-sim analyze`: HTA's figures for trace files on the command line (in-process main()).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../../helpers/cli';
import { exportChromeTrace } from '../../../src/trace/chrome_export';
import { fixturePath } from '../../helpers/fixtures';

const HTA = fixturePath('hta/');
const expected = JSON.parse(readFileSync(join(HTA, 'expected.json'), 'utf8')).trace_filter;
const files: string[] = expected.files.map((f: string) => join(HTA, f));
const tmp = mkdtempSync(join(tmpdir(), 'fsdp-sim-analyze-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('fsdp-sim analyze', () => {
  it("prints HTA's per-rank figures for .json.gz rank files (--json), per iteration too", async () => {
    const r = await cli(['analyze', ...files, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.files).toEqual(files);
    for (const row of j.ranks) {
      const want = expected.ranks[String(row.rank)];
      for (const k of ['overlapPct', 'idlePct', 'computePct', 'nonComputePct'])
        expect(Math.abs(row[k] - want[k])).toBeLessThanOrEqual(0.1);
      expect(Math.abs(row.spanUs - want.spanUs)).toBeLessThanOrEqual(1);
    }
    expect(j.iterations.map((x: { iteration: number; rank: number }) => [x.iteration, x.rank])).toEqual([
      [551, 0],
      [551, 1],
    ]);
    expect(j.overall.collectives.send_recv).toBe(5);
    // warnings name the file, not its position
    expect(j.warnings.every((w: string) => files.some((f) => w.startsWith(f)))).toBe(true);
  });

  it('reads plain .json the same as .json.gz, and prints a table with "–" where there is no figure', async () => {
    const plain = join(tmp, 'rank0.json');
    writeFileSync(plain, gunzipSync(readFileSync(files[0])));
    const [gz, js] = await Promise.all([cli(['analyze', files[0], '--json']), cli(['analyze', plain, '--json'])]);
    expect(JSON.parse(js.out).ranks).toEqual(JSON.parse(gz.out).ranks);
    const text = await cli(['analyze', plain]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^rank\s+span ms\s+overlap %\s+idle %\s+compute %\s+non-compute %/);
    expect(text.out).toContain('53.56'); // rank 0's idle %, as HTA prints it
    expect(text.out).toMatch(/peak –/); // the file has no memory records: unknown, not 0
  });

  it('gives null overlap (HTA: NaN) for a rank without communication', async () => {
    const f = join(tmp, 'nocomm.json');
    const events = [{ rank: 0, stream: 'compute' as const, name: 'mm', kind: 'compute' as const, start: 0, dur: 10 }];
    writeFileSync(f, JSON.stringify(exportChromeTrace({ events, worldSize: 1 })));
    const j = JSON.parse((await cli(['analyze', f, '--json'])).out);
    expect(j.ranks[0].overlapPct).toBeNull();
    expect((await cli(['analyze', f])).out).toMatch(/^0\s+0\.010\s+–/m);
  });

  it('fails with one line naming the file: missing, not JSON, malformed field, no file at all', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{"traceEvents": [');
    const field = join(tmp, 'field.json');
    writeFileSync(
      field,
      JSON.stringify({
        traceEvents: [
          {
            ph: 'X',
            cat: 'kernel',
            name: 'k',
            pid: 0,
            tid: 7,
            ts: 'soon',
            dur: 1,
            args: { stream: 7, correlation: 1 },
          },
        ],
      }),
    );
    const cases: [string[], number, RegExp][] = [
      [['analyze', join(tmp, 'nope.json')], 1, /^fsdp-sim analyze: cannot read '.*nope\.json': ENOENT$/],
      [['analyze', bad], 1, /bad\.json: trace is not valid JSON/],
      [
        ['analyze', files[0], field],
        1,
        /field\.json: file\[1\]\.traceEvents\[0\]\.ts must be a number in \[0, 2\^53\) µs, got "soon"/,
      ],
      [['analyze'], 2, /give at least one trace FILE/],
      [['analyze', files[0], '--jsn'], 2, /valid flags: \[--json, --help\]/],
    ];
    for (const [args, code, re] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.err).toMatch(re);
      expect(r.err.split('\n')).toHaveLength(1);
    }
  });
});
