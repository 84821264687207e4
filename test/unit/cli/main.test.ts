// CLI end to end: spawned processes for the real entry points, in-process main() for flag errors.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES } from '../../../src/backends/schedule_types';
import { cli as inProcess } from '../../helpers/cli';
import { HARDWARE_NAMES } from '../../../src/estimate';
import { importTrace } from '../../../src/trace/import';
import { fixturePath, REPO_ROOT } from '../../helpers/fixtures';

const FX = (f: string) => fixturePath('fx', f);
const run = promisify(execFile);

async function cli(args: string[], entry: string[] = ['--import', 'tsx', 'src/cli/cli.ts']) {
  try {
    const options = { cwd: REPO_ROOT, maxBuffer: 64 << 20 };
    const { stdout, stderr } = await run(process.execPath, [...entry, ...args], options);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe('fsdp-sim compare', () => {
  it('prints exactly the JSON shape, and autobucketing beats aot_eager on llama3-8b / 8 ranks', async () => {
    const r = await cli(['compare', '--model', 'llama3-8b', '--ranks', '8', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { results: Record<string, unknown>[] };
    expect(Object.keys(json)).toEqual(['mesh', 'results', 'torchtitanFlags']);
    const flags = (json as unknown as { torchtitanFlags: Record<string, unknown> }).torchtitanFlags;
    expect(Object.keys(flags)).toEqual(['aot_eager', 'aot_eager_autobucketing']);
    expect((json as unknown as { mesh: object }).mesh).toEqual({ dp_replicate: 1, dp_shard: 8, tp: 1 });
    expect(json.results.map((x) => x.backend)).toEqual(['aot_eager', 'aot_eager_autobucketing']);
    for (const x of json.results) {
      expect(Object.keys(x).sort()).toEqual([
        'backend',
        'collectives',
        'collectivesTotal',
        'exposedCommMs',
        'exposedCommMsByGroup',
        'overlapPct',
        'peakAllocatedBytes',
        'peakMemoryBytes',
        'peakReservedBytes',
        'stepTimeMs',
        'tokensPerSecPerGpu',
      ]);
      // the caching allocator rounds and fragments: reserved ≥ allocated; tokens/s = local tokens / step
      expect(x.peakReservedBytes as number).toBeGreaterThanOrEqual(x.peakAllocatedBytes as number);
      expect(x.tokensPerSecPerGpu as number).toBeCloseTo(8192 / ((x.stepTimeMs as number) / 1000), 6);
      // one process group on a 1-D mesh: SimpleFSDP's 'dp', holding every launch
      const t = x.collectivesTotal as { all_gather: number; reduce_scatter: number; all_reduce: number };
      expect(x.collectives).toEqual({ dp: t });
      expect(t.all_reduce).toBe(0);
    }
    const [a, b] = json.results as {
      exposedCommMs: number;
      collectivesTotal: { all_gather: number; reduce_scatter: number };
    }[];
    const n = (x: typeof a) => x.collectivesTotal.all_gather + x.collectivesTotal.reduce_scatter;
    expect(n(b)).toBeLessThan(n(a));
    expect(b.exposedCommMs).toBeLessThan(a.exposedCommMs);
  });

  it('writes one Chrome trace per backend with --trace, each importable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fsdp-sim-trace-'));
    try {
      const r = await inProcess([
        'compare',
        '--ranks',
        '2',
        '--backends',
        'aot_eager,transformer_block',
        '--trace',
        dir,
      ]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/transformer_block/);
      expect(readdirSync(dir).sort()).toEqual(['aot_eager.trace.json', 'transformer_block.trace.json']);
      const back = importTrace(readFileSync(join(dir, 'aot_eager.trace.json'), 'utf8'));
      expect(back.ok && back.value.worldSize).toBe(2);
      const per = await inProcess(['compare', '--ranks', '2', '--backends', 'aot_eager', '--trace', dir, '--per-rank']);
      expect(per.code).toBe(0);
      const files = readdirSync(join(dir, 'aot_eager')).sort();
      expect(files).toEqual(['rank0.pt.trace.json', 'rank1.pt.trace.json']);
      const both = importTrace(files.map((f) => readFileSync(join(dir, 'aot_eager', f), 'utf8')));
      expect(both.ok && [...new Set(both.value.events.map((e) => e.rank))]).toEqual([0, 1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints a table with one row per backend', async () => {
    const r = await inProcess(['compare', '--model', 'tiny', '--ranks', '4', '--hardware', 'a100']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(
        'backend\\s+step ms\\s+exposed comm ms\\s+overlap %\\s+peak live tensors GiB\\s+' +
          'peak allocated GiB\\s+peak reserved GiB\\s+tok/s/GPU\\s+#AG\\s+#RS',
      ),
    );
    expect(r.out.split('\n').filter((l) => /^aot_eager/.test(l))).toHaveLength(2);
  });
});

describe('fsdp-sim pass', () => {
  it('runs autobucketing on the torch FX fixtures and reports fewer collectives and less exposure', async () => {
    const r = await cli(
      [
        'pass',
        '--fx-graph',
        FX('tiny_4layer_fw.json'),
        FX('tiny_4layer_bw.json'),
        '--backend',
        'aot_eager_autobucketing',
        '--hardware',
        'h200',
        '--json',
      ],
      ['bin/fsdp-sim.mjs'],
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual([
      'collectivesBefore',
      'collectivesAfter',
      'buckets',
      'exposedMsBefore',
      'exposedMsAfter',
      'peakBytesBefore',
      'peakBytesAfter',
      // torch's own accounting of the pass (autobucketing), and the knob profile it ran with
      'torchProfile',
      'potentialExposedMs',
      'scheduledExposedMs',
      'graphs',
      'reasons',
    ]);
    // before = every collective in the two dumps, counted from the files themselves
    const count = (f: string) =>
      JSON.parse(readFileSync(FX(f), 'utf8')).nodes.filter((x: { target: string }) =>
        /all_gather_into_tensor|reduce_scatter_tensor/.test(x.target),
      ).length;
    expect(j.collectivesBefore).toBe(count('tiny_4layer_fw.json') + count('tiny_4layer_bw.json'));
    expect(j.torchProfile).toBe('torch-2.15'); // the default profile
    // each bucket of k members replaces k collectives with one
    const merged = j.buckets.reduce((s: number, b: string[]) => s + b.length - 1, 0);
    expect(j.collectivesAfter).toBe(j.collectivesBefore - merged);
    expect(j.collectivesAfter).toBeLessThan(j.collectivesBefore);
    expect(j.exposedMsAfter).toBeLessThan(j.exposedMsBefore);
  });

  it('fails with exit 1 naming the file on a malformed dump', async () => {
    const r = await inProcess(['pass', '--fx-graph', fixturePath('kineto/rank0.pt.trace.json')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('rank0.pt.trace.json');
  });
});

describe('fsdp-sim flags', () => {
  it('exits 2 with one line naming an unknown flag and the valid ones (spawned)', async () => {
    const r = await cli(['compare', '--rank', '8']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/Unknown option '--rank'.*--ranks/);
  });

  it('exits 2 naming the flag and the allowed values for a bad value', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['compare', '--hardware', 'tpu'],
        new RegExp(`^fsdp-sim compare: --hardware must be one of \\[${HARDWARE_NAMES.join(', ')}\\], got "tpu"$`),
      ],
      [['compare', '--ranks', '0'], /--ranks must be an integer in \[1, 1024\], got "0"/],
      [
        ['compare', '--backends', 'aot_eager,inductor'],
        new RegExp(`--backends entries must be one of \\[${BACKEND_NAMES.join(', ')}\\], got "inductor"`),
      ],
      [
        ['compare', '--set', 'autobucketing.max_in_flight_gb=-1'],
        /--set autobucketing.max_in_flight_gb must be a number in \[0, 1024\]/,
      ],
      [['compare', '--set', 'nope=1'], /--set PATH must be one of \[model, ranks, .*\], got "nope"/],
      [['compare', '--ranks'], /--ranks <value>' argument missing/],
      [['compare', '--json=yes'], /--json' does not take an argument/],
      [['pass', '--backend', 'aot_eager'], /--fx-graph FILE is required/],
      [['pass', '--fx-graph', '/no/such/file.json'], /--fx-graph cannot read '\/no\/such\/file.json': ENOENT/],
      [
        ['frobnicate'],
        /unknown command 'frobnicate'; valid commands: \[compare, sweep, diff, calibrate, pass, train, analyze, help\]/,
      ],
      [['compare', 'extra'], /Unexpected argument 'extra'/],
    ];
    for (const [args, re] of cases) {
      const r = await inProcess(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(re);
      expect(r.err.split('\n')).toHaveLength(1);
    }
  });

  it('dispatches train to the training command (its own flags and exit codes)', async () => {
    expect((await inProcess(['train', '--help'])).code).toBe(0);
    expect((await inProcess(['train', '--bogus'])).code).toBe(2);
  });

  it('prints help for --help and per command', async () => {
    const top = await inProcess(['--help']);
    expect(top.code).toBe(0);
    expect(top.out).toMatch(/usage: fsdp-sim <command>/);
    // every command's usage, train's included, and examples whose files exist in the clone
    for (const c of ['compare', 'sweep', 'diff', 'calibrate', 'pass', 'train', 'analyze'])
      expect(top.out).toContain(`usage: fsdp-sim ${c}`);
    const files = top.out.match(/test\/fixtures\/\S+/g) ?? [];
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(existsSync(new URL(`../../../${f}`, import.meta.url)), f).toBe(true);
    const cmp = await inProcess(['compare', '--help']);
    expect(cmp.out).toMatch(/--backends A,B/);
    expect((await inProcess([])).code).toBe(2);
  });
});
