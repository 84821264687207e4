// analyze and calibrate read traces as streams (issue 31): a file's size is no longer capped, the
// events kept are (FSDP_SIM_MAX_KEPT_EVENTS), and the output is the whole-text reader's.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { keptEventsBudget } from '../../../src/cli/trace_input';
import { cli, tempDirs } from '../../helpers/cli';
import { fixturePath } from '../../helpers/fixtures';

const HTA = fixturePath('hta/');
const files: string[] = JSON.parse(readFileSync(join(HTA, 'expected.json'), 'utf8')).trace_filter.files.map(
  (f: string) => join(HTA, f),
);
const tempDir = tempDirs('fsdp-sim-stream-');

afterEach(() => {
  delete process.env.FSDP_SIM_MAX_KEPT_EVENTS;
});

describe('analyze reads traces as streams', () => {
  it('prints the same analysis for gzip and plain rank files, read in chunks', async () => {
    const d = tempDir();
    const plain = files.map((f, i) => {
      const p = join(d, `rank${i}.json`);
      writeFileSync(p, gunzipSync(readFileSync(f)));
      return p;
    });
    const a = await cli(['analyze', ...files, '--json']);
    const b = await cli(['analyze', ...plain, '--json']);
    expect([a.code, b.code]).toEqual([0, 0]);
    const drop = (o: string) => ({ ...JSON.parse(o), files: [], warnings: [] });
    expect(JSON.parse(b.out).warnings).toHaveLength(JSON.parse(a.out).warnings.length);
    expect(drop(b.out)).toEqual(drop(a.out));
  });

  it('stops at the budget on kept events, naming the file, the budget and how to raise it', async () => {
    process.env.FSDP_SIM_MAX_KEPT_EVENTS = '1000';
    const r = await cli(['analyze', ...files]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(
        String.raw`^fsdp-sim analyze: .*sampled_rank-0\.json\.gz: file\[0\] takes the import past its budget of ` +
          String.raw`1,000 kept trace events \(over all files\); set FSDP_SIM_MAX_KEPT_EVENTS higher \(it is 1000;`,
      ),
    );
    expect(r.err).toMatch(/NODE_OPTIONS=--max-old-space-size/);
    expect(r.err.split('\n')).toHaveLength(1);
  });

  it('names a cut gzip file and refuses a bad budget', async () => {
    const d = tempDir();
    const cut = join(d, 'cut.json.gz');
    const gz = gzipSync(gunzipSync(readFileSync(files[0])));
    writeFileSync(cut, gz.subarray(0, gz.length >> 1));
    const r = await cli(['analyze', cut]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^fsdp-sim analyze: .*cut\.json\.gz: trace could not be decompressed \(gzip\): /);
    for (const bad of ['0', '-3', '1.5', 'lots'])
      expect(() => keptEventsBudget({ FSDP_SIM_MAX_KEPT_EVENTS: bad }), bad).toThrow(
        /FSDP_SIM_MAX_KEPT_EVENTS must be a whole number of events > 0/,
      );
    expect(keptEventsBudget({}).max).toBe(12_000_000);
  });
});
