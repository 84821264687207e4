// CLI findings, each reproduced first: the package bin's process wrapper, flag lookups of
// user strings, duplicate backends, the straggler factor given alone, the HBM hint, and per-rank
// exports that Holistic Trace Analysis reads rank by rank.
import { execFile, spawn } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inputLimit, readInputText } from '../../../src/cli/io';
import { cli, tempDirs } from '../../helpers/cli';
import { importTrace } from '../../../src/trace/import';
import { fixturePath, REPO_ROOT } from '../../helpers/fixtures';

const tempDir = tempDirs('fsdp-sim-i22-');

describe('the package bin shares main.ts process wrapper (C3)', () => {
  it('bin/fsdp-sim.mjs diff ... | head -1 prints one line and exits quietly (no EPIPE stack)', async () => {
    const sh = 'node bin/fsdp-sim.mjs diff --model llama3-8b --ranks 8 | head -1';
    const { stdout, stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', sh], { cwd: REPO_ROOT });
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

describe('input files are read bounded, by one reader (H4, H5, U2, U3)', () => {
  const FW = fixturePath('fx/tiny_4layer_fw.json');

  it('refuses a device, a directory and a file over the limit before reading any of it', async () => {
    // a pipe is read: test/unit/cli/hostile_inputs.test.ts
    const d = tempDir();
    const sparse = join(d, 'huge.json'); // 600 MiB of holes: no disk used, and never read
    const fd = openSync(sparse, 'w');
    ftruncateSync(fd, 600 * 2 ** 20);
    closeSync(fd);
    const cases: [string[], number, RegExp][] = [
      [['analyze', '/dev/zero'], 1, /^fsdp-sim analyze: cannot read '\/dev\/zero': not a regular file or pipe \(a dev/],
      [['pass', '--torch-log', '/dev/zero', '--fx-graph', FW], 2, /--torch-log cannot read '\/dev\/zero': not a reg/],
      [['analyze', d], 1, /cannot read '.*': not a regular file or pipe \(a directory\)$/],
      [['pass', '--fx-graph', '/dev/zero'], 2, /^fsdp-sim pass: --fx-graph cannot read '\/dev\/zero': not a regular/],
      // analyze streams a trace (issue 31): no size cap, and 600 MiB of NULs are refused at the first byte
      [['analyze', sparse], 1, /huge\.json: trace is not valid JSON: it starts with "\\u0000", which starts no JSON/],
      [['pass', '--fx-graph', sparse], 2, /--fx-graph '.*huge\.json' is 600\.0 MiB, over the 500 MiB input limit/],
    ];
    for (const [args, code, re] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.err, args.join(' ')).toMatch(re);
      expect(r.err.split('\n')).toHaveLength(1);
    }
  });

  it('stops inflating a gzip bomb at the limit and says so (not a string-length or JSON error)', async () => {
    const d = tempDir();
    const bomb = join(d, 'bomb.json.gz');
    writeFileSync(bomb, gzipSync(Buffer.alloc(8 * 2 ** 20, 0x20))); // 8 MiB of spaces in ~8 KiB
    await expect(readInputText(bomb, '', 2 ** 20)).rejects.toThrow(
      /bomb\.json\.gz inflates \(gzip\) to more than the 1 MiB limit on a trace's text; not read further/,
    );
    process.env.FSDP_SIM_MAX_INPUT_MIB = '1';
    try {
      const r = await cli(['analyze', bomb]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/inflates \(gzip\) to more than the 1 MiB limit/);
    } finally {
      delete process.env.FSDP_SIM_MAX_INPUT_MIB;
    }
    // under the limit the same bytes are read whole
    expect(await readInputText(bomb, '', 16 * 2 ** 20)).toHaveLength(8 * 2 ** 20);
  });

  it('takes its limit from FSDP_SIM_MAX_INPUT_MIB, never past the longest string', () => {
    expect(inputLimit({})).toBe(500 * 2 ** 20);
    expect(inputLimit({ FSDP_SIM_MAX_INPUT_MIB: '2' })).toBe(2 * 2 ** 20);
    for (const bad of ['0', '-1', 'lots', '501'])
      expect(() => inputLimit({ FSDP_SIM_MAX_INPUT_MIB: bad }), bad).toThrow(/FSDP_SIM_MAX_INPUT_MIB must be a number/);
  });

  it('pass reads a gzipped dump and one with a UTF-8 BOM as it reads the plain file', async () => {
    const d = tempDir();
    const gz = join(d, 'fw.json.gz');
    const bom = join(d, 'bom.json');
    writeFileSync(gz, gzipSync(readFileSync(FW)));
    writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(FW)]));
    const plain = await cli(['pass', '--fx-graph', FW, '--json']);
    expect(plain.code).toBe(0);
    for (const f of [gz, bom]) {
      const r = await cli(['pass', '--fx-graph', f, '--json']);
      expect(r.err, f).toBe('');
      expect(r.code, f).toBe(0);
      expect(JSON.parse(r.out)).toEqual(JSON.parse(plain.out));
    }
  });
});

describe('--trace temporaries never outlive a run (A2)', () => {
  const TRACE_FILES = join(REPO_ROOT, 'src/cli/trace_files.ts');

  /** Runs `script` (TypeScript) in a child node; resolves to how it ended. */
  const child = (script: string, dir: string) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; pid: number }>((resolve) => {
      const file = join(dir, 'child.mts');
      writeFileSync(file, script);
      const c = spawn(process.execPath, ['--import', 'tsx', file], { cwd: REPO_ROOT, stdio: 'ignore' });
      c.on('exit', (code, signal) => resolve({ code, signal, pid: c.pid! }));
    });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} mid-write removes the temporaries and ends the process as signalled`, async () => {
      const d = tempDir();
      const out = join(d, 'out');
      // an endless file: the signal (sent after its first chunk) always lands mid-write
      const script = `import { writeTraceFiles } from ${JSON.stringify(TRACE_FILES)};
        function* chunks() {
          yield '{"traceEvents":[';
          process.kill(process.pid, '${signal}');
          for (;;) yield ' '.repeat(1 << 16);
        }
        const out = ${JSON.stringify(out)};
        await writeTraceFiles(out, [{ path: out + '/a.trace.json', chunks }]);`;
      const r = await child(script, d);
      expect(r.signal).toBe(signal);
      // the run's fresh folder (next to out) is gone, and out was never made
      expect(readdirSync(d)).toEqual(['child.mts']);
    });
  }

  it('removes the temporaries of a dead run when the next run writes there, and keeps a live one', async () => {
    const d = tempDir();
    const out = join(d, 'traces'); // a folder of its own: d holds the child's script
    const sub = join(out, 'aot_eager');
    const dead = await child('process.exit(0);', d); // a pid that has exited
    const live = spawn('sleep', ['60']);
    try {
      const args = ['compare', '--ranks', '2', '--backends', 'aot_eager', '--trace', out, '--per-rank'];
      expect((await cli(args)).code).toBe(0);
      const left = [`rank0.pt.trace.json.${dead.pid}.tmp`, `rank1.pt.trace.json.${live.pid}.tmp`];
      for (const n of left) writeFileSync(join(sub, n), '{"traceEvents":[');
      expect((await cli(args)).code).toBe(0);
      expect(readdirSync(sub).sort()).toEqual(['rank0.pt.trace.json', 'rank1.pt.trace.json', left[1]]);
      const kept = readdirSync(sub).filter((f) => f.endsWith('.json'));
      const back = importTrace(kept.map((f) => readFileSync(join(sub, f), 'utf8')));
      expect(back.ok).toBe(true);
    } finally {
      live.kill();
    }
  });
});

describe('sweep: bounded cost, progress, every value checked first (H2, U4)', () => {
  it("refuses the issue's 9,984-point llama3-405b sweep by its estimate, before running anything", async () => {
    const vary = ['--vary', 'ranks=8:1024:8', '--vary', 'localBatch=1:78:1'];
    const r = await cli(['sweep', '--model', 'llama3-405b', '--backends', 'aot_eager', ...vary]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^fsdp-sim sweep: 9984 points × 1 backend\(s\) would run about \d+ min \(~1134 ms a run\)/);
    expect(r.err).toMatch(/, over the 15 min budget; narrow the --vary values or give --budget-min \d+$/);
  });

  it('--budget-min sets the budget; --progress prints the first and the last point on stderr', async () => {
    const base = ['sweep', '--model', 'tiny', '--vary', 'ranks=2,4,8', '--backends', 'aot_eager'];
    const low = await cli([...base, '--budget-min', '0.0001']);
    expect(low.code).toBe(2);
    expect(low.err).toMatch(/over the 0\.0001 min budget; narrow the --vary values or give --budget-min 1$/);
    expect((await cli([...base, '--budget-min', 'soon'])).err).toMatch(/--budget-min must be a number of minutes > 0/);
    const quiet = await cli(base);
    expect([quiet.code, quiet.err]).toEqual([0, '']); // an estimated 0.05 s: no progress unless asked
    const r = await cli([...base, '--progress', '--csv']);
    expect(r.code).toBe(0);
    const lines = r.err.split('\n');
    expect(lines[0]).toBe('sweep: 1/3 points (33 %)');
    expect(lines.at(-1)).toBe('sweep: 3/3 points (100 %)');
    expect(r.out.split('\n')).toHaveLength(4); // the header and three rows, stdout untouched
  });

  it('a tp the model refuses at one point fails the sweep before any point runs (exit 2, empty stdout)', async () => {
    const args = ['sweep', '--model', 'tiny', '--ranks', '8', '--progress', '--backends', 'aot_eager'];
    const r = await cli([...args, '--vary', 'seed=1:200:1', '--vary', 'parallelism.tensor_parallel_degree=1,8']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      'fsdp-sim sweep: point 1 (seed=1, parallelism.tensor_parallel_degree=8): mesh.tp (tensor_parallel_degree 8) ' +
        "must divide the model's nHeads (4): the TP plan splits it across the tp group",
    );
  });
});
