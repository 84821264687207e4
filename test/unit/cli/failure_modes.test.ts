// How the CLI fails, case by case (defects found by probing): each case failed before its fix.
// In-process main() with a buffered Io, so no test depends on another's state; trace folders are
// fresh temp dirs.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli, tempDirs } from '../../helpers/cli';
import { HARDWARE_NAMES } from '../../../src/estimate';
import { importTrace } from '../../../src/trace/import';
import { fixturePath, REPO_ROOT } from '../../helpers/fixtures';

const FX = ['tiny_4layer_fw.json', 'tiny_4layer_bw.json'].map((f) => fixturePath('fx', f));
// torch 2.11's knobs: 2.13's pre-bucketing leaves the tiny model one collective per graph and kind,
// so no order for the ranks to disagree on
const HANG = ['--ranks', '8', '--jitter-pct', '50', '--alignment', 'off', '--torch-profile', '2.11'];

const tempDir = tempDirs('fsdp-sim-cli-');

describe('a collective mismatch is an error in every output', () => {
  it('compare --json gives the hung backend {backend, error} with no step time, and exits 1', async () => {
    const r = await cli(['compare', '--model', 'tiny', ...HANG, '--json']);
    expect(r.code).toBe(1);
    const [ok, hung] = JSON.parse(r.out).results;
    expect(ok.backend).toBe('aot_eager');
    expect(ok.stepTimeMs).toBeGreaterThan(0);
    expect(Object.keys(hung).sort()).toEqual(['backend', 'error']);
    expect(hung.error.kind).toBe('collective_mismatch');
    expect(Object.keys(hung.error).sort()).toEqual(['descriptors', 'kind', 'ranks', 'seq']);
    const [r0, r1] = hung.error.ranks as number[];
    expect(r0).not.toBe(r1);
    expect(hung.error.descriptors[0]).not.toBe(hung.error.descriptors[1]);
    expect(r.err).toMatch(/aot_eager_autobucketing: collective mismatch at collective #\d+/);
  });

  it('compare prints the message instead of a table row, and exits 1', async () => {
    const r = await cli(['compare', '--model', 'tiny', ...HANG]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter((l) => /^aot_eager_autobucketing/.test(l))).toEqual([]);
    expect(r.err).toMatch(/rank \d+ issued .* but rank \d+ issued .*this step hangs.*--alignment on/);
  });

  it('pass reports the mismatch instead of peaks (JSON {error}, exit 1)', async () => {
    const hang = ['--jitter-pct', '50', '--alignment', 'off', '--torch-profile', '2.11'];
    const r = await cli(['pass', '--fx-graph', ...FX, ...hang, '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(Object.keys(j)).toEqual(['error']);
    expect(j.error.kind).toBe('collective_mismatch');
    expect(r.err).toMatch(/collective mismatch/);
  });
});

describe('compare --trace writes all files or none', () => {
  const traceRun = (dir: string, ...extra: string[]) =>
    cli(['compare', '--ranks', '4', '--backends', 'aot_eager', '--trace', dir, ...extra]);

  it('fails in one line naming the path when DIR is a file, under a file, or empty', async () => {
    const d = tempDir();
    const file = join(d, 'f');
    writeFileSync(file, 'x');
    for (const [dir, re] of [
      [file, /--trace .*'.*\/f'.*not a directory/],
      [join(file, 'sub'), /'.*\/f\/sub'.*not a directory/],
      ['', /--trace needs a directory, got ''/],
    ] as const) {
      const r = await traceRun(dir);
      expect(r.code, dir).not.toBe(0);
      expect(r.err, dir).toMatch(re);
      expect(r.err.split('\n'), dir).toHaveLength(1);
      // the comparison itself ran: its table is printed before the trace error
      if (dir !== '') expect(r.out, dir).toMatch(/^aot_eager /m);
    }
  });

  it('leaves the old run whole when one rank file cannot be replaced', async () => {
    const d = tempDir();
    expect((await traceRun(d, '--per-rank', '--seed', '1', '--jitter-pct', '5')).code).toBe(0);
    const sub = join(d, 'aot_eager');
    const before = readdirSync(sub)
      .sort()
      .map((f) => readFileSync(join(sub, f), 'utf8'));
    rmSync(join(sub, 'rank2.pt.trace.json'));
    mkdirSync(join(sub, 'rank2.pt.trace.json')); // a target nothing can be renamed over
    const r = await traceRun(d, '--per-rank', '--seed', '2', '--jitter-pct', '5');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/rank2\.pt\.trace\.json/);
    for (const k of [0, 1, 3]) expect(readFileSync(join(sub, `rank${k}.pt.trace.json`), 'utf8')).toBe(before[k]);
    expect(readdirSync(sub).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('removes the rank files a larger earlier run left (8 ranks, then 4)', async () => {
    const d = tempDir();
    expect((await cli(['compare', '--ranks', '8', '--backends', 'aot_eager', '--trace', d, '--per-rank'])).code).toBe(
      0,
    );
    expect(readdirSync(join(d, 'aot_eager'))).toHaveLength(8);
    expect((await traceRun(d, '--per-rank')).code).toBe(0);
    const files = readdirSync(join(d, 'aot_eager')).sort();
    expect(files).toEqual(['rank0.pt.trace.json', 'rank1.pt.trace.json', 'rank2.pt.trace.json', 'rank3.pt.trace.json']);
    const runs = files.map((f) => JSON.parse(readFileSync(join(d, 'aot_eager', f), 'utf8')).fsdpSim.run);
    expect(new Set(runs).size).toBe(1);
    expect(runs[0]).toMatch(/^aot_eager\?/);
  });

  it('says in the file when it holds fewer ranks than the world (64 ranks up)', async () => {
    const d = tempDir();
    expect((await cli(['compare', '--ranks', '64', '--backends', 'aot_eager', '--trace', d])).code).toBe(0);
    const t = JSON.parse(readFileSync(join(d, 'aot_eager.trace.json'), 'utf8'));
    expect(t.fsdpSim.ranks).toEqual([0]);
    expect(t.fsdpSim.note).toMatch(/^1 of 64 ranks/);
    expect((await cli(['compare', '--help'])).out).toMatch(/from 64 ranks up rank 0 only/);
  });
});

describe('flags are checked, not ignored', () => {
  it('rejects flags that cannot apply, naming the flag typed', async () => {
    const cases: [string[], RegExp][] = [
      [['pass', '--fx-graph', FX[0], '--ranks', '8'], /--ranks does not apply: the FX dump fixes the graph/],
      [['pass', '--fx-graph', FX[0], '--model', 'llama3-8b'], /--model does not apply/],
      [['compare', '--per-rank'], /--per-rank applies to --trace/],
      [['compare', '--straggler-factor', '2'], /--straggler-factor applies to the straggler; give --straggler-rank/],
      [
        ['compare', '--ac', 'partial'],
        /^fsdp-sim compare: --ac must be one of \[none, selective, full, null\], got "partial"$/,
      ],
      [['compare', '--alignment', 'maybe'], /^fsdp-sim compare: --alignment must be one of \[on, off\], got "maybe"$/],
      [
        ['compare', '--ranks', '-8'],
        /^fsdp-sim compare: --ranks takes a value; one that starts with '-' must be written --ranks=-8$/,
      ],
      [['compare', '--ranks=-8'], /--ranks must be an integer in \[1, 1024\], got "-8"/],
      [['compare', '--ranks', '0x10'], /--ranks must be an integer in \[1, 1024\], got "0x10"/],
      [['compare', '--ranks', '1e1'], /--ranks must be an integer/],
      [['compare', '--bandwidth-gbps', '1e-300'], /--bandwidth-gbps must be a number in \[0.01, 100000\]/],
      [
        ['compare', '--hardware', 'tpu'],
        new RegExp(`--hardware must be one of \\[${HARDWARE_NAMES.join(', ')}\\], got "tpu"`),
      ],
    ];
    for (const [args, re] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(re);
      expect(r.err.split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('compare --help lists the backends under --backends, not under --ac', async () => {
    const help = (await cli(['compare', '--help'])).out.split('\n');
    const ac = help.findIndex((l) => /^ {2}--ac /.test(l));
    expect(help.slice(ac, ac + 2).join('\n')).not.toMatch(/aot_eager/);
    expect(help.find((l) => /^ {2}--backends /.test(l))).toMatch(/aot_eager_autobucketing/);
  });

  it('stops quietly when the reader of stdout goes away (| head)', async () => {
    const sh = `node --import tsx src/cli/cli.ts pass --fx-graph ${FX.join(' ')} | true`;
    const { stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', sh], { cwd: REPO_ROOT });
    expect(stderr).toBe('');
  });
});

describe('fsdp-sim pass prints what ran', () => {
  it("names the backend's passes and, with --print-graph, every scheduled node once in FX form", async () => {
    const r = await cli(['pass', '--fx-graph', FX[0], '--print-graph']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^passes: +schedule_overlap \(OverlapScheduler\) → bucket_collectives/m);
    const fw = JSON.parse(readFileSync(FX[0], 'utf8')) as { nodes: { op: string }[] };
    const lines = r.out.split('\n').filter((l) => /^%\d+ /.test(l));
    const ids = lines.map((l) => Number(/^%(\d+)/.exec(l)![1]));
    expect(new Set(ids).size).toBe(ids.length);
    // every call_function becomes one IR node (placeholders are tensors); each merge into a bucket
    // removes one collective and its wait
    const [before, after] = /collectives: +(\d+) → (\d+)/.exec(r.out)!.slice(1).map(Number);
    expect(lines.length).toBe(fw.nodes.filter((n) => n.op === 'call_function').length - 2 * (before - after));
    expect(r.out).toMatch(/^# step graph fx-import: world 8/m);
  });
});

describe('the trace importer takes the files of one run only', () => {
  const rankFiles = async (dir: string, ...args: string[]) => {
    expect((await cli(['compare', '--backends', 'aot_eager', '--trace', dir, '--per-rank', ...args])).code).toBe(0);
    return readdirSync(join(dir, 'aot_eager'))
      .sort()
      .map((f) => readFileSync(join(dir, 'aot_eager', f), 'utf8'));
  };

  it('refuses files of two world sizes (a 4-rank run with ranks 4-7 an 8-rank run left)', async () => {
    const eight = await rankFiles(tempDir(), '--ranks', '8');
    const four = await rankFiles(tempDir(), '--ranks', '4');
    const r = importTrace([...four, ...eight.slice(4)]);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.message).toMatch(
        /^file\[0\] says world_size 4 but file\[4\] says 8: these files come from different runs/,
      );
  });

  it('refuses files of two runs of the same world size, naming both runs', async () => {
    const a = await rankFiles(tempDir(), '--ranks', '2');
    const b = await rankFiles(tempDir(), '--ranks', '2', '--seed', '7', '--jitter-pct', '3');
    const r = importTrace([a[0], b[1]]);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.message).toBe(
        "file[0] is run 'aot_eager?ranks=2' but file[1] is run 'aot_eager?ranks=2&seed=7&jitterPct=3': " +
          'import the files of one run together',
      );
    expect(importTrace(a).ok).toBe(true);
  });

  it('refuses a rank at or above the world size', () => {
    const kernel = (pid: number) => ({
      ph: 'X',
      cat: 'kernel',
      name: 'gemm',
      pid,
      tid: 7,
      ts: 10 * pid,
      dur: 5,
      args: { stream: 7, correlation: pid },
    });
    const r = importTrace({ traceEvents: [kernel(0), kernel(5)], distributedInfo: { rank: 0, world_size: 2 } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toBe("trace is rank 5, but the trace's world_size is 2 (ranks 0..1)");
  });
});

describe('deeply nested JSON in a trace', () => {
  it('names the event and field of a 100k-deep value instead of overflowing the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const r = importTrace(`{"traceEvents":[{"ph":"X","name":${deep},"ts":0,"dur":1,"cat":"kernel","pid":0,"tid":7}]}`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toBe('trace.traceEvents[0].name must be a string, got [[[[[…]]]]]');
  });
});

describe('compare --trace streams its files', () => {
  it('writes text that parses to the export, chunk by chunk, its rank on the first line', async () => {
    const { exportChromeTrace } = await import('../../../src/trace/chrome_export');
    const { chromeTraceJson } = await import('../../../src/trace/chrome_json');
    const { runPipeline } = await import('../../../src/pipeline');
    const { validateConfig } = await import('../../../src/config');
    const cfg = validateConfig({ ranks: 4 });
    if (!cfg.ok) throw cfg.error;
    const r = runPipeline(cfg.value, 'aot_eager_autobucketing');
    const trace = exportChromeTrace({ events: r.sim.events, memory: r.sim.memory, worldSize: 4 }, { label: 'x' });
    expect(trace.traceEvents.length).toBeGreaterThan(250); // several chunks of 100 below
    const text = [...chromeTraceJson(trace, 100)].join('');
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(trace)));
    expect(text.split('\n')[0]).toBe('{"distributedInfo": {"rank": 0, "world_size": 4},');
  });

  it('gzips with --gzip (one gzip stream the browser and the importer read), replacing the plain file', async () => {
    const { gunzipSync } = await import('node:zlib');
    const { traceText } = await import('../../../src/trace/gzip');
    const d = tempDir();
    expect((await cli(['compare', '--ranks', '2', '--backends', 'aot_eager', '--trace', d])).code).toBe(0);
    const plain = readFileSync(join(d, 'aot_eager.trace.json'), 'utf8');
    const r = await cli(['compare', '--ranks', '2', '--backends', 'aot_eager', '--trace', d, '--gzip']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(join(d, 'aot_eager.trace.json.gz'));
    expect(readdirSync(d)).toEqual(['aot_eager.trace.json.gz']);
    const bytes = readFileSync(join(d, 'aot_eager.trace.json.gz'));
    expect(gunzipSync(bytes).toString('utf8')).toBe(plain);
    expect(await traceText('aot_eager.trace.json.gz', new Uint8Array(bytes))).toBe(plain);
    expect((await cli(['compare', '--gzip'])).err).toMatch(/--gzip applies to --trace/);
  });
});
