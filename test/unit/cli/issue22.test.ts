// Issue 22's CLI findings, each reproduced first: the package bin's process wrapper, flag lookups of
// user strings, duplicate backends, the straggler factor given alone, the HBM hint, and per-rank
// exports that Holistic Trace Analysis reads rank by rank.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { importTrace } from '../../../src/trace/import';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'fsdp-sim-i22-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the package bin shares main.ts process wrapper (C3)', () => {
  it('bin/fsdp-sim.mjs diff ... | head -1 prints one line and exits quietly (no EPIPE stack)', async () => {
    const sh = 'node bin/fsdp-sim.mjs diff --model llama3-8b --ranks 8 | head -1';
    const { stdout, stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', sh], { cwd: REPO });
    expect(stdout).toMatch(/^rank 0: \d+ collectives/);
    expect(stderr).toBe('');
  });
});

describe('user strings are never looked up as object keys (U1)', () => {
  it('--alignment constructor names the value the user typed', async () => {
    for (const v of ['constructor', '__proto__', 'toString']) {
      const r = await cli(['compare', '--alignment', v]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`fsdp-sim compare: --alignment must be one of [on, off], got "${v}"`);
    }
  });
});

describe('flags that cannot apply are refused (A1, U6)', () => {
  it('--backends aot_eager,aot_eager is refused before anything runs or is written', async () => {
    const d = tempDir();
    const r = await cli(['compare', '--backends', 'aot_eager,aot_eager', '--trace', d]);
    expect(r.code).toBe(2);
    expect(r.err).toBe('fsdp-sim compare: --backends names aot_eager twice; give each backend once');
    expect(readdirSync(d)).toEqual([]);
  });

  it('--set straggler.factor=100 without a straggler rank is refused like --straggler-factor 100', async () => {
    const set = await cli(['compare', '--set', 'straggler.factor=100']);
    expect(set.code).toBe(2);
    const why = 'applies to the straggler; give --straggler-rank R too';
    expect(set.err).toBe(`fsdp-sim compare: --set straggler.factor ${why}`);
    const flag = await cli(['compare', '--straggler-factor', '100']);
    expect(flag.err).toMatch(/--straggler-factor applies to the straggler/);
    const both = await cli(['compare', '--model', 'tiny', '--set', 'straggler.factor=2', '--straggler-rank', '1']);
    expect(both.code).toBe(0);
  });
});

describe('the HBM warning suggests only what the model accepts (U5)', () => {
  it('tiny (4 heads) is told a --tp that then runs', async () => {
    const big = ['--model', 'tiny', '--ranks', '8', '--ac', 'full', '--batch', '256', '--seq-len', '131072'];
    const r = await cli(['compare', ...big, '--backends', 'aot_eager']);
    const tp = /the step does not fit \(try --tp (\d+)\)/.exec(r.out)?.[1];
    expect(tp).toBeDefined();
    const again = await cli(['compare', ...big, '--backends', 'aot_eager', '--tp', tp!]);
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
  });
});

describe('HTA reads every rank of a per-rank export', () => {
  // hta/common/trace_file.py create_rank_to_trace_dict: files ending in .json or .gz, and the rank
  // is the first match of this regex in the file's text (at least one space after the colon)
  const HTA_RANK = /"rank":\s+(\d+)/;
  const htaListed = (f: string) => f.endsWith('.json') || f.endsWith('.gz');

  for (const gzip of [false, true]) {
    it(`finds ranks 0..7 in 8 files${gzip ? ' (--gzip)' : ''}, named as torch.profiler names them`, async () => {
      const d = tempDir();
      const args = ['compare', '--ranks', '8', '--backends', 'aot_eager', '--trace', d, '--per-rank'];
      expect((await cli(gzip ? [...args, '--gzip'] : args)).code).toBe(0);
      const sub = join(d, 'aot_eager');
      const files = readdirSync(sub).filter(htaListed).sort();
      expect(files).toHaveLength(8);
      for (const f of files) expect(f).toMatch(gzip ? /^rank\d\.pt\.trace\.json\.gz$/ : /^rank\d\.pt\.trace\.json$/);
      const texts = files.map((f) => {
        const bytes = readFileSync(join(sub, f));
        return (gzip ? gunzipSync(bytes) : bytes).toString('utf8');
      });
      const htaRanks = texts.map((t) => Number(HTA_RANK.exec(t)?.[1]));
      expect([...htaRanks].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // on the first line, where the profiler writes it, and the same rank the JSON holds
      for (const [i, t] of texts.entries()) {
        expect(HTA_RANK.exec(t.split('\n')[0])?.[1]).toBe(String(htaRanks[i]));
        expect(JSON.parse(t).distributedInfo).toEqual({ rank: htaRanks[i], world_size: 8 });
        expect(files[i]).toBe(`rank${htaRanks[i]}.pt.trace.json${gzip ? '.gz' : ''}`);
      }
      const back = importTrace(texts);
      expect(back.ok).toBe(true);
      if (back.ok) {
        expect([...new Set(back.value.events.map((e) => e.rank))].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        expect(back.value.worldSize).toBe(8);
      }
    });
  }
});
