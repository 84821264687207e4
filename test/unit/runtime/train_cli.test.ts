// `fsdp-sim train`: flag errors name the flag and the allowed values (exit 2); --json prints
// exactly the result fields, the step breakdown among them.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES } from '../../../src/backends/schedule_types';
import { parseTrainArgs, trainCommand } from '../../../src/cli/train_command';

/** A regex matching `text` literally (the backend list grows with the registry). */
const literal = (text: string): RegExp => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

function bufferIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
}

describe('parseTrainArgs', () => {
  it('reads every flag, in both --flag value and --flag=value forms', () => {
    const a = parseTrainArgs([
      '--model',
      'tiny',
      '--ranks=4',
      '--steps',
      '7',
      '--backend',
      'aot_eager_autobucketing',
      '--seed',
      '3',
      '--kernels',
      'auto',
      '--collective',
      'ring',
      '--json',
    ]);
    expect(a.json).toBe(true);
    expect(a.opts).toMatchObject({
      model: 'tiny',
      ranks: 4,
      steps: 7,
      backend: 'aot_eager_autobucketing',
      seed: 3,
      kernels: 'auto',
      collective: 'ring',
    });
    expect(a.notices).toEqual([]);
  });

  it('takes --kernels webgpu, and the old spelling gpu as webgpu with a notice saying so', () => {
    expect(parseTrainArgs(['--kernels', 'webgpu']).opts.kernels).toBe('webgpu');
    const old = parseTrainArgs(['--kernels=gpu']);
    expect(old.opts.kernels).toBe('webgpu');
    expect(old.notices).toEqual(['fsdp-sim train: --kernels gpu is now --kernels webgpu; running with webgpu']);
  });
});

describe('trainCommand', () => {
  it.each([
    [['--ranks', '17'], /--ranks must be an integer in \[1, 16\], got "17"/],
    [['--ranks', '0'], /--ranks must be an integer in \[1, 16\], got "0"/],
    [['--ranks', '3', '--global-batch', '8'], /--global-batch must be divisible by .*--ranks \/ --tp \(3\), got 8/],
    [['--ranks', '4', '--tp', '3'], /--tp × --dp-replicate \(3 × 1\) must divide --ranks \(4\)/],
    [['--ranks', '8', '--tp', '2', '--dp-replicate', '3'], /--tp × --dp-replicate \(2 × 3\) must divide --ranks \(8\)/],
    [['--tp', '0'], /--tp must be an integer in \[1, 16\], got "0"/],
    // the plan rejects what the model cannot split: tiny has 4 heads
    [['--ranks', '8', '--tp', '8'], /mesh.tp \(tensor_parallel_degree 8\) must divide the model's nHeads \(4\)/],
    [['--backend', 'inductor'], literal(`--backend must be one of [${BACKEND_NAMES.join(', ')}], got "inductor"`)],
    [['--kernels', 'tpu'], /--kernels must be one of \[webgpu, cpu, auto\]/],
    [['--collective', 'tree'], /--collective must be one of \[direct, ring\]/],
    [['--steps=-1'], /--steps must be an integer in \[1, 1000000\], got "-1"/],
    [['--steps', '-1'], /--steps takes a value; one that starts with '-' must be written --steps=-1/],
    [['--model', 'llama3-8b'], /--model must be one of \[tiny, moe-tiny\], got "llama3-8b"/],
    [['--frobnicate'], /Unknown option '--frobnicate'; valid flags: \[--model, .*--json.*\]/],
    [['--seed'], /--seed needs a value/],
  ])('exits 2 with one line naming the flag for %j', async (argv, re) => {
    const { io, out, err } = bufferIo();
    expect(await trainCommand(argv as string[], io)).toBe(2);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(re);
    expect(err[0]).not.toContain('\n');
  });

  it('writes the notice of an old --kernels spelling to stderr, once, before anything else', async () => {
    const { io, out, err } = bufferIo();
    expect(await trainCommand(['--kernels', 'gpu', '--help'], io)).toBe(0);
    expect(err).toEqual(['fsdp-sim train: --kernels gpu is now --kernels webgpu; running with webgpu']);
    expect(out.join('\n')).toContain('[--kernels webgpu|cpu|auto]');
  });

  it('prints exactly {device, losses, finalParamsHash, stepsPerSec, phases} with --json', async () => {
    const { io, out, err } = bufferIo();
    const code = await trainCommand(
      ['--ranks', '2', '--steps', '2', '--backend', 'aot_eager', '--kernels', 'cpu', '--json'],
      io,
    );
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    const res = JSON.parse(out[0]);
    expect(Object.keys(res)).toEqual(['device', 'losses', 'finalParamsHash', 'stepsPerSec', 'phases']);
    expect(res.device).toBe('cpu reference');
    expect(res.losses).toHaveLength(2);
    expect(res.finalParamsHash).toMatch(/^[0-9a-f]{8}$/);
    expect(res.stepsPerSec).toBeGreaterThan(0);
    // phases: per step, per rank; the mean row is over steps after the first, so it is step 2's mean here.
    expect(res.phases.unit).toBe('ms');
    expect(res.phases.perStep).toHaveLength(2);
    for (const ranks of res.phases.perStep) expect(ranks).toHaveLength(2);
    const step2 = res.phases.perStep[1];
    const meanCompute = (step2[0].compute + step2[1].compute) / 2;
    expect(res.phases.mean.compute).toBeCloseTo(meanCompute, 2);
    // The phases and `other` (time in none of them) add up to the measured step. How much lands in
    // `other` depends on how busy the machine is (a preempted worker's gap is `other`), so the check
    // is only that the phases are measured at all: most of the step, never more than all of it.
    const rows: Record<string, number>[] = res.phases.perStep.flat();
    const covered = rows.reduce(
      (a, r) => a + r.compute + r.collective + r.barrier + r.readback + r.upload + r.compile,
      0,
    );
    const stepMs = rows.reduce((a, r) => a + r.stepMs, 0);
    expect(covered).toBeLessThanOrEqual(stepMs + 1e-6);
    expect(covered).toBeGreaterThan(0.5 * stepMs);
    expect(rows.reduce((a, r) => a + r.other, 0)).toBeCloseTo(stepMs - covered, 1);
  }, 120_000);

  it('trains 3 ranks with the default global batch rounded up to 9 rows', () => {
    const a = parseTrainArgs(['--ranks', '3']);
    expect(a.opts).toMatchObject({ ranks: 3, globalBatch: 9 });
    expect(parseTrainArgs(['--ranks', '4']).opts.globalBatch).toBe(8);
    expect(parseTrainArgs(['--ranks', '16']).opts.globalBatch).toBe(16);
  });

  // Two steps: the second loss reads what the mesh's optimizer step wrote (the meshes' own math
  // over more steps and ranks is mesh_training.test.ts's; here, that the flags build them).
  it('trains on 2 × 2 meshes (--tp 2, and HSDP: --dp-replicate 2) with the 1-rank losses within 1e-4', async () => {
    const run = async (...flags: string[]) => {
      const { io, out, err } = bufferIo();
      const argv = ['--steps', '2', '--global-batch', '4', '--backend', 'aot_eager', '--kernels', 'cpu', '--json'];
      const code = await trainCommand([...argv, ...flags], io);
      expect(err).toEqual([]);
      expect(code).toBe(0);
      return JSON.parse(out[0]) as { losses: number[]; phases: { perStep: unknown[][] } };
    };
    const one = await run('--ranks', '1');
    for (const mesh of [
      ['--tp', '2'],
      ['--dp-replicate', '2'],
    ]) {
      const res = await run('--ranks', '4', ...mesh);
      expect(res.losses).toHaveLength(2);
      const at = (i: number) => `${mesh.join(' ')}, step ${i + 1}`;
      res.losses.forEach((l, i) => expect(Math.abs(l - one.losses[i]), at(i)).toBeLessThan(1e-4));
      expect(res.phases.perStep[0]).toHaveLength(4);
    }
  }, 240_000);

  it('defaults the global batch per data-parallel rank: --tp ranks share their rows', () => {
    expect(parseTrainArgs(['--ranks', '4', '--tp', '2']).opts).toMatchObject({ ranks: 4, tp: 2, globalBatch: 8 });
    expect(parseTrainArgs(['--ranks', '16', '--tp', '4']).opts.globalBatch).toBe(8);
  });
});

describe('trainCommand on moe-tiny', () => {
  it('trains 4 ranks with --ep 2 for 5 steps, printing falling losses', async () => {
    const { io, out, err } = bufferIo();
    const argv = ['--model', 'moe-tiny', '--ranks', '4', '--ep', '2', '--steps', '5', '--every', '1'];
    argv.push('--kernels', 'cpu');
    expect(await trainCommand(argv, io)).toBe(0);
    expect(err).toEqual([]);
    expect(out[0]).toMatch(/^training moe-tiny on 4 rank\(s\) \(FSDP 4 × EP 2\), 5 steps/);
    const losses = out.flatMap((l) => /^step +\d+ +loss (\S+)/.exec(l)?.[1] ?? []).map(Number);
    expect(losses).toHaveLength(5);
    expect(losses[4]).toBeLessThan(losses[0] - 0.2);
    losses.slice(1).forEach((l, i) => expect(l, `step ${i + 2}`).toBeLessThan(losses[i]));
  }, 120_000);

  it('refuses an --ep that does not divide the ranks, and --ep on a dense model, naming the flag', async () => {
    for (const [flags, why] of [
      [['--model', 'moe-tiny', '--ranks', '4', '--ep', '3'], /ep \(3\) must divide/],
      [['--model', 'tiny', '--ranks', '2', '--ep', '2'], /ep .*needs an MoE model/],
    ] as const) {
      const { io, err } = bufferIo();
      expect(await trainCommand([...flags, '--kernels', 'cpu'], io), flags.join(' ')).toBe(2);
      expect(err.join('\n')).toMatch(why);
    }
    expect(parseTrainArgs(['--model', 'moe-tiny', '--ranks', '4', '--ep', '4']).opts).toMatchObject({ ep: 4 });
  });
});
