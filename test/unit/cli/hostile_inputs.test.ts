// Hostile files: the CLI on inputs made to break it. Each case failed before its fix;
// every input is made here, in a fresh temporary folder.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compareWithTorch, parseTorchPassLog, type PassStats } from '../../../src/backends';
import { cli, tempDirs } from '../../helpers/cli';
import { fixturePath, REPO_ROOT } from '../../helpers/fixtures';

const tempDir = tempDirs('fsdp-sim-31-');
const TINY_FW = fixturePath('fx/tiny_4layer_fw.json');
const sh = (script: string) =>
  promisify(execFile)('bash', ['-c', script], { cwd: REPO_ROOT }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

describe('write errors', () => {
  it('stdout on /dev/full: one line naming the stream and the reason, exit 1, no stack', async () => {
    const r = await sh('node --import tsx src/cli/cli.ts compare --model tiny --ranks 2 > /dev/full');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('fsdp-sim: cannot write to standard output: ENOSPC (write); output is incomplete\n');
  });

  it('compare --trace under /proc/self ends with a clear error (it used to spin forever)', async () => {
    const args = ['--model', 'tiny', '--ranks', '2', '--backends', 'aot_eager', '--trace', '/proc/self/x'];
    const r = await cli(['compare', ...args]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^fsdp-sim compare: --trace cannot create a folder next to '\/proc\/self\/x': ENOENT$/);
  });
});

describe('compare --trace DIR: one run, switched into place', () => {
  const run = (dir: string, ...extra: string[]) =>
    cli(['compare', '--model', 'tiny', '--ranks', '4', '--backends', 'aot_eager', '--trace', dir, ...extra]);

  it("keeps other backends' traces, drops stale rank files, leaves no temporaries", async () => {
    const parent = tempDir();
    const d = join(parent, 'out');
    expect((await run(d, '--per-rank', '--ranks', '8')).code).toBe(0);
    expect((await run(d, '--backends', 'fsdp2_eager')).code).toBe(0);
    expect((await run(d, '--per-rank')).code).toBe(0);
    expect(readdirSync(join(d, 'aot_eager')).sort()).toEqual([0, 1, 2, 3].map((r) => `rank${r}.pt.trace.json`));
    expect(readdirSync(d).sort()).toEqual(['aot_eager', 'fsdp2_eager.trace.json']);
    expect(readdirSync(parent)).toEqual(['out']);
  });

  it('refuses a folder holding anything but its traces (it replaces the whole folder), changing nothing', async () => {
    const d = tempDir();
    writeFileSync(join(d, 'notes.txt'), 'mine');
    const r = await run(d);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `fsdp-sim compare: --trace '${d}' holds 'notes.txt', not a trace of fsdp-sim; the run replaces the whole ` +
        'folder: give a folder of its own',
    );
    expect(readdirSync(d)).toEqual(['notes.txt']);
    expect((await run('.')).err).toMatch(/^fsdp-sim compare: --trace '\.' holds '.*', not a trace of fsdp-sim/);
  });

  it('writes through a link to the folder, never into what a planted link names', async () => {
    const parent = tempDir();
    const real = join(parent, 'real');
    mkdirSync(real);
    const victim = join(parent, 'victim');
    writeFileSync(victim, 'untouched');
    symlinkSync(victim, join(real, 'aot_eager.trace.json'));
    symlinkSync(real, join(parent, 'link'));
    expect((await run(join(parent, 'link'))).code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(JSON.parse(readFileSync(join(real, 'aot_eager.trace.json'), 'utf8')).traceEvents.length).toBeGreaterThan(0);
    expect(readdirSync(parent).sort()).toEqual(['link', 'real', 'victim']);
    expect(existsSync(join(parent, 'link'))).toBe(true);
  });
});

describe("pass --torch-log: only torch's own log of this pass", () => {
  const FIX = fixturePath('torch_pass');
  const gz = (p: string) => gunzipSync(readFileSync(join(FIX, p))).toString('utf8');
  const G = 'llama8b_2layer_seq2048_saved';
  const inputs = () => {
    const d = tempDir();
    const put = (name: string, text: string) => {
      writeFileSync(join(d, name), text);
      return join(d, name);
    };
    return {
      put,
      fw: put('fw.json', gz(`fx/${G}_fw.json.gz`)),
      bw: put('bw.json', gz(`fx/${G}_bw.json.gz`)),
      fw64: put('fw64.json', gz(`fx/${G}_w64_fw.json.gz`)),
      bw64: put('bw64.json', gz(`fx/${G}_w64_bw.json.gz`)),
      log: gz(`logs/${G}_fw.log.gz`) + gz(`logs/${G}_bw.log.gz`),
    };
  };

  it("refuses the FX dump itself (it names collectives, but no line of it is torch's)", async () => {
    const f = inputs();
    const r = await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', f.fw]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `fsdp-sim pass: --torch-log '${f.fw}' is not torch's pass log: it holds no overlap_scheduling / ` +
        "overlap_preserving_bucketer DEBUG lines naming a collective (torch's own lines: 'Overlapping collective', " +
        "'bucketed ... using timeline position', 'Scheduled node', ...)",
    );
  });

  it('refuses a log of another graph, naming the file and collectives the graph lacks', async () => {
    const f = inputs();
    const other = f.put('other.log', f.log.replaceAll('all_gather_into_tensor_3 ', 'all_gather_into_tensor_3000 '));
    const r = await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', other, '--torch-profile', '2.11']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      new RegExp(
        `^fsdp-sim pass: --torch-log '${other}': torch's log \\(forward\\) names 1 collective\\(s\\) ` +
          'this FX graph does not have \\(all_gather_into_tensor_3000\\): a log of another graph',
      ),
    );
  });

  it("says a profile mismatch (torch 2.11's log, 2.13's knobs) before any agreement figure", async () => {
    const f = inputs();
    const log = f.put('torch.log', f.log);
    const r = await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', log]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: --torch-log '.*': this run's FSDP pre-bucketing \(torch 2\.13's knobs\) merged/);
    expect(r.err).toMatch(/the log was made without it \(torch 2\.11's knobs: --torch-profile 2\.11\)/);
    const json = JSON.parse((await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', log, '--json'])).out);
    expect(json.torchLogWarnings).toHaveLength(1);
    // the log's own profile: no warning, full agreement
    const ok = await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', log, '--torch-profile', '2.11']);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(ok.out).toMatch(/\(forward\): buckets 100\.0 % of pairs, prefetches 100\.0 %/);
  });

  it('says a log that stops mid-line looks cut short, before any agreement figure', async () => {
    const f = inputs();
    const half = f.log.slice(0, Math.floor(f.log.length / 2));
    const cut = f.put('cut.log', half.endsWith('\n') ? half.slice(0, -1) : half);
    const r = await cli(['pass', '--fx-graph', f.fw, f.bw, '--torch-log', cut, '--torch-profile', '2.11']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: --torch-log '.*': it stops mid-line, so it looks cut short/);
    // the whole log ends its last line: no such warning
    const whole = await cli([
      'pass',
      '--fx-graph',
      f.fw,
      f.bw,
      '--torch-log',
      f.put('t.log', f.log),
      '--torch-profile',
      '2.11',
    ]);
    expect(whole.err).toBe('');
  });

  it('says a world-size mismatch (the same graph dumped at 64 ranks, the log at 8)', async () => {
    const f = inputs();
    const log = f.put('torch.log', f.log);
    const r = await cli(['pass', '--fx-graph', f.fw64, f.bw64, '--torch-log', log, '--torch-profile', '2.11']);
    expect(r.code).toBe(0);
    const lines = r.err.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/torch's log \(forward\) was made with other runtimes or another world size \(torch vs /);
    expect(lines[0]).toMatch(/collectives' estimates 8\.47 ms vs 45\.64 ms, original peak 4\.18 GiB vs 3\.58 GiB/);
  });

  it('measures agreement on a 20,000-member bucket in linear time (it used to build every pair)', () => {
    const n = 20_000;
    const name = (i: number) => (i === 0 ? 'all_gather_into_tensor' : `all_gather_into_tensor_${i}`);
    const start = 'Overlap scheduling: Aligning runtime estimations';
    const lines = [`torch._inductor.fx_passes.overlap_scheduling INFO ${start}`];
    for (let i = 1; i < n; i++)
      lines.push(
        'torch._inductor.fx_passes.overlap_preserving_bucketer DEBUG bucketed ' +
          `${name(i)} with ${name(0)} using timeline position 1: (start=${name(0)}, wait=wait_tensor)`,
      );
    const [log] = parseTorchPassLog(lines.join('\n'));
    expect(log.buckets).toHaveLength(1);
    expect(log.buckets[0]).toHaveLength(n);
    const all = Array.from({ length: n }, (_, i) => name(i));
    const stats = (buckets: string[][]) =>
      ({
        phase: 'forward',
        collectives: all,
        collectivesBefore: n,
        collectivesAfter: buckets.length,
        overlapping: {},
        buckets,
        potentialExposedMs: 0,
        scheduledExposedMs: 0,
      }) as unknown as PassStats;
    expect(compareWithTorch(stats([all]), log, []).bucketAgreement).toBe(1);
    // two halves: C(10⁴, 2)·2 of C(2·10⁴, 2) pairs agree; the first 10 disagreements only
    const halves = compareWithTorch(stats([all.slice(0, n / 2), all.slice(n / 2)]), log, []);
    expect(halves.bucketAgreement).toBeCloseTo((2 * (n / 2) * (n / 2 - 1)) / (n * (n - 1)), 12);
    expect(halves.disagreements).toHaveLength(10);
    expect(halves.collectivesAfter).toEqual({ torch: 1, fsdpSim: 2 });
  });
});

describe('sweep --vary backendA / backendB runs the backends it names', () => {
  it('each point runs its own backend A and B', async () => {
    const r = await cli(['sweep', '--model', 'tiny', '--vary', 'backendA=aot_eager,fsdp2_eager', '--json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.out).rows as { values: { backendA: string }; backend: string }[];
    expect(rows.map((x) => [x.values.backendA, x.backend])).toEqual([
      ['aot_eager', 'aot_eager'],
      ['aot_eager', 'aot_eager_autobucketing'],
      ['fsdp2_eager', 'fsdp2_eager'],
      ['fsdp2_eager', 'aot_eager_autobucketing'],
    ]);
    const b = await cli(['sweep', '--model', 'tiny', '--vary', 'backendB=aot_eager,fsdp2_eager', '--json']);
    const backends = JSON.parse(b.out).rows.map((x: { backend: string }) => x.backend);
    expect(backends).toEqual(['aot_eager', 'aot_eager', 'fsdp2_eager']);
  });

  it('refuses --backends with a backend --vary (the one fixes what the other varies)', async () => {
    const r = await cli(['sweep', '--model', 'tiny', '--vary', 'backendB=aot_eager', '--backends', 'aot_eager']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/--vary backendB sets the backends each point runs, and --backends fixes them; give one$/);
  });
});

describe('knobs that change nothing are refused by name, with the reason', () => {
  it.each([
    [['compare', '--set', 'memoryPolicy=full'], /--set memoryPolicy applies to compileMode=aot_fx_trace/],
    [['compare', '--set', 'memoryPolicy=sac_and_offload'], /--set memoryPolicy applies to compileMode=aot_fx_trace/],
    [
      ['compare', '--set', 'fsdpAgRsOverlap=true'],
      new RegExp(
        '--set fsdpAgRsOverlap applies to ' +
          "compileMode=aot_fx_trace [(]graph_trainer's compile[.]enable_fsdp_ag_rs_overlap[)]; " +
          'under compileMode=jit it changes nothing: give',
      ),
    ],
    [
      ['compare', '--set', 'fsdpDenseRegionOverlap=true'],
      new RegExp(
        '--set fsdpDenseRegionOverlap applies to ' +
          "compileMode=aot_fx_trace [(]graph_trainer's compile[.]enable_fsdp_dense_region_overlap[)]",
      ),
    ],
    [['compare', '--ac', 'full', '--set', 'compileMode=aot_fx_trace'], /--ac changes nothing under/],
    [['pass', '--fx-graph', TINY_FW, '--set', 'ranks=64'], /--set ranks=64 does not apply/],
  ])('%j', async (args, re) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(re);
  });

  it('sweep refuses a --vary of a knob the compile mode never reads (every row would be the same)', async () => {
    const r = await cli(['sweep', '--model', 'tiny', '--vary', 'memoryPolicy=default,full']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^fsdp-sim sweep: point 0: --vary memoryPolicy applies to compileMode=aot_fx_trace/);
    const aot = await cli([
      'sweep',
      '--model',
      'tiny',
      '--vary',
      'activationCheckpointing=none,full',
      '--set',
      'compileMode=aot_fx_trace',
    ]);
    expect(aot.err).toMatch(/^fsdp-sim sweep: point 0: --vary activationCheckpointing changes nothing under/);
  });

  it('takes memoryPolicy under aot_fx_trace, and --ac under jit', async () => {
    const aot = ['--set', 'compileMode=aot_fx_trace', '--set', 'memoryPolicy=full'];
    expect((await cli(['compare', '--model', 'tiny', ...aot])).code).toBe(0);
    const overlap = ['--set', 'compileMode=aot_fx_trace', '--set', 'fsdpAgRsOverlap=true'];
    expect((await cli(['compare', '--model', 'tiny', ...overlap])).code).toBe(0);
    // cudaGraphs is read under jit too (FSDP2's core-trainer capture): not refused
    expect((await cli(['compare', '--model', 'tiny', '--set', 'cudaGraphs=on'])).code).toBe(0);
    expect((await cli(['compare', '--model', 'tiny', '--ac', 'full'])).code).toBe(0);
  });
});

describe('the simulated clock stays below 2^53 µs', () => {
  it('refuses cost-model durations past it (no est_ms in the dump), naming the node and what is large', async () => {
    // 200 all-gathers of 2^50 bytes at 10 MB/s: ~5.6e13 µs each by the cost model
    const nodes: object[] = [];
    const outs: string[] = [];
    for (let k = 0; k < 200; k++) {
      const [p, ag, w] = [`primals_${k}`, `all_gather_into_tensor_${k}`, `wait_tensor_${k}`];
      const big = { dtype: 'bfloat16', shape: [2 ** 24, 2 ** 24] };
      nodes.push({ name: p, op: 'placeholder', target: p, args: [], ...big });
      const target = '_c10d_functional.all_gather_into_tensor.default';
      nodes.push({ name: ag, op: 'call_function', target, args: [p], ...big, shape: [2 ** 25, 2 ** 24] });
      const wait = '_c10d_functional.wait_tensor.default';
      nodes.push({ name: w, op: 'call_function', target: wait, args: [ag], ...big, shape: [2 ** 25, 2 ** 24] });
      outs.push(w);
    }
    nodes.push({ name: 'output', op: 'output', target: 'output', args: outs });
    const dump = {
      format: 'fsdp-sim fx dump v1',
      graph: 'forward',
      source: 'made by the test',
      world_size: 2,
      nodes: nodes.map((n, i) => ({ i, ...n })),
    };
    const f = join(tempDir(), 'huge.json');
    writeFileSync(f, JSON.stringify(dump));
    const r = await cli(['pass', '--fx-graph', f, '--bandwidth-gbps', '0.01', '--backend', 'aot_eager']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^fsdp-sim pass: the step's durations add up to 1\.126e\+16 µs .*past the simulated clock/);
    expect(r.err).toMatch(/'all_gather_into_tensor_0' \(all_gather of 1125899906842624 bytes\) alone takes 5\.6/);
  });
});

describe('calibrate and analyze say what a trace holds', () => {
  const kernel = (name: string, ts: number, dur: number, correlation: number) => ({
    ph: 'X',
    cat: 'kernel',
    name,
    ts,
    dur,
    pid: 0,
    tid: 7,
    args: { stream: 7, correlation },
  });
  const trace = (cpu: object[]) => ({
    distributedInfo: { rank: 0, world_size: 8 },
    traceEvents: [
      ...cpu,
      kernel('sm90_xmma_gemm_bf16bf16_bf16f32', 100, 50, 1),
      kernel('void at::native::vectorized_elementwise_kernel', 200, 5, 2),
    ],
  });
  const put = (json: object) => {
    const f = join(tempDir(), 'rank0.pt.trace.json');
    writeFileSync(f, JSON.stringify(json));
    return f;
  };

  it('calibrate: no collectives found, and a class with no kernel keeps scale 1 (not 0)', async () => {
    const f = put(trace([]));
    const r = await cli(['calibrate', f, '--model', 'tiny', '--ranks', '8']);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('no collectives were found in the trace: no process group to fit α, β to');
    expect(r.out).toMatch(/^attention +– +[\d.]+ +1 \(no kernel of the class in the trace: unchanged\)$/m);
    const j = JSON.parse((await cli(['calibrate', f, '--model', 'tiny', '--ranks', '8', '--json'])).out);
    expect(j.scales.find((s: { cls: string }) => s.cls === 'attention')).toMatchObject({ scale: 1, absent: true });
  });

  it("analyze: kernels without a CPU launch are said to be there, and why HTA's window leaves them out", async () => {
    const f = put(trace([{ ph: 'X', cat: 'cpu_op', name: 'aten::mm', ts: 90, dur: 5, pid: 0, tid: 1, args: {} }]));
    const r = await cli(['analyze', f]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/traceEvents holds 2 GPU event\(s\), none in HTA's window: HTA analyses a GPU event only/);
    expect(r.err).not.toMatch(/holds no GPU kernels/);
  });
});

describe('pass: work size checked before work starts', () => {
  /** A forward dump of `n` all-gathers of [1, 16] shards at `world` ranks. */
  const agDump = (world: number, n: number) => {
    const nodes: object[] = [];
    for (let k = 0; k < n; k++) {
      const [p, ag, w] = [`primals_${k}`, `all_gather_into_tensor_${k}`, `wait_tensor_${k}`];
      const t = { dtype: 'bfloat16', shape: [world, 16] };
      nodes.push({ name: p, op: 'placeholder', target: p, args: [], dtype: 'bfloat16', shape: [1, 16] });
      const [agOp, waitOp] = ['all_gather_into_tensor', 'wait_tensor'].map((o) => `_c10d_functional.${o}.default`);
      nodes.push({ name: ag, op: 'call_function', target: agOp, args: [p], ...t });
      nodes.push({ name: w, op: 'call_function', target: waitOp, args: [ag], ...t });
    }
    const waits = Array.from({ length: n }, (_, k) => `wait_tensor_${k}`);
    nodes.push({ name: 'output', op: 'output', target: 'output', args: waits });
    const f = join(tempDir(), `w${world}.json`);
    const head = { format: 'fsdp-sim fx dump v1', graph: 'forward', source: 'test', world_size: world };
    writeFileSync(f, JSON.stringify({ ...head, nodes: nodes.map((x, i) => ({ i, ...x })) }));
    return f;
  };

  it('refuses world_size 65,536 with --jitter-pct (every rank simulated), naming the field and the limit', async () => {
    const f = agDump(65_536, 200);
    const r = await cli(['pass', '--fx-graph', f, '--jitter-pct', '5']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `fsdp-sim pass: ${f}: world_size 65536 with --jitter-pct 5 simulates every rank: 400 nodes × 65536 × 2 runs = ` +
        '52428800 node-steps, over the limit of 16777216 (about half a minute); drop --jitter-pct (symmetric ranks ' +
        'are simulated once) or use a dump with world_size ≤ 20971',
    );
  });

  it('runs the same dump with symmetric ranks, and --progress reports each run on stderr', async () => {
    const r = await cli(['pass', '--fx-graph', agDump(65_536, 200), '--progress', '--backend', 'aot_eager']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('pass: 1/2 runs\npass: 2/2 runs');
    expect(r.out).toMatch(/\(65536 ranks, /);
  });
});

describe("'-', /dev/stdin and pipes are read where a file is expected", () => {
  it('pass reads its FX dump from standard input, /dev/stdin, a process substitution and a FIFO', async () => {
    const fifo = join(tempDir(), 'fw.fifo');
    const run = 'node --import tsx src/cli/cli.ts pass --backend aot_eager --json --fx-graph';
    const script = [
      `${run} - < ${TINY_FW}`,
      `cat ${TINY_FW} | ${run} /dev/stdin`,
      `${run} <(cat ${TINY_FW})`,
      `mkfifo ${fifo}; (cat ${TINY_FW} > ${fifo} &); ${run} ${fifo}`,
    ].join('\n');
    const r = await sh(script);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const outs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(outs).toHaveLength(4);
    for (const o of outs) expect(o).toEqual(outs[0]);
    expect(outs[0].collectivesBefore).toBeGreaterThan(0);
  });

  it("refuses '-' twice, a directory, and a device, each in one line", async () => {
    const d = tempDir();
    for (const [args, re] of [
      [['pass', '--fx-graph', '-', '--torch-log', '-'], /'-' \(standard input\) can be read once/],
      [['analyze', d], /cannot read '.*': not a regular file or pipe \(a directory\)$/],
      [['calibrate', '/dev/zero'], /cannot read '\/dev\/zero': not a regular file or pipe \(a device\)$/],
    ] as const) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.err, args.join(' ')).toMatch(re);
      expect(r.err.split('\n')).toHaveLength(1);
    }
  });
});

describe('names from input files reach the terminal with control characters escaped', () => {
  it("pass prints an FX node's name with its escape sequence, carriage return and bidi override escaped", async () => {
    const fw = JSON.parse(readFileSync(TINY_FW, 'utf8')) as { nodes: { name: string; args: string[] }[] };
    const evil = 'mm\u001b]0;pwned\u0007\r\u202e';
    for (const n of fw.nodes) {
      if (n.name === 'mm') n.name = evil;
      n.args = n.args.map((a) => (a === 'mm' ? evil : a));
    }
    const f = join(tempDir(), 'fw.json');
    writeFileSync(f, JSON.stringify(fw));
    const r = await cli(['pass', '--fx-graph', f, '--print-graph', '--backend', 'aot_eager']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('mm\\x1b]0;pwned\\x07\\x0d\\u202e');
    const raw = [...r.out].filter((c) => c !== '\n' && c !== '\t' && (c < ' ' || c === '\u007f' || c === '\u202e'));
    expect(raw).toEqual([]);
  });

  it('a file name with control characters is escaped in an error line too', async () => {
    const r = await cli(['analyze', join(tempDir(), 'x\u001b[2J.json')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/x\\x1b\[2J\.json': ENOENT$/);
  });
});
