// `fsdp-sim train`: flag errors name the flag and the allowed values (exit 2); --json prints
// exactly the four result fields.
import { describe, expect, it } from 'vitest';
import { parseTrainArgs, trainCommand } from '../../../src/cli/train';

function bufferIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
}

describe('parseTrainArgs', () => {
  it('reads every flag, in both --flag value and --flag=value forms', () => {
    const a = parseTrainArgs(['--model', 'tiny', '--ranks=4', '--steps', '7', '--backend', 'aot_eager_autobucketing',
      '--seed', '3', '--kernels', 'auto', '--collective', 'ring', '--json']);
    expect(a.json).toBe(true);
    expect(a.opts).toMatchObject({ model: 'tiny', ranks: 4, steps: 7, backend: 'aot_eager_autobucketing', seed: 3, kernels: 'auto', collective: 'ring' });
  });
});

describe('trainCommand', () => {
  it.each([
    [['--ranks', '3'], /--ranks must be one of \[1, 2, 4, 8\], got "3"/],
    [['--backend', 'inductor'], /--backend must be one of \[aot_eager, aot_eager_autobucketing, transformer_block\], got "inductor"/],
    [['--kernels', 'tpu'], /--kernels must be one of \[gpu, cpu, auto\]/],
    [['--collective', 'tree'], /--collective must be one of \[direct, ring\]/],
    [['--steps', '-1'], /--steps must be an integer in \[1, 1000000\], got "-1"/],
    [['--model', 'llama3-8b'], /--model must be one of \[tiny\]/],
    [['--frobnicate'], /flag must be one of \[--model, .*--json.*\], got "--frobnicate"/],
    [['--seed'], /--seed needs a value/],
  ])('exits 2 with one line naming the flag for %j', async (argv, re) => {
    const { io, out, err } = bufferIo();
    expect(await trainCommand(argv as string[], io)).toBe(2);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(re);
    expect(err[0]).not.toContain('\n');
  });

  it('prints exactly {device, losses, finalParamsHash, stepsPerSec} with --json', async () => {
    const { io, out, err } = bufferIo();
    const code = await trainCommand(['--ranks', '2', '--steps', '2', '--backend', 'aot_eager', '--kernels', 'cpu', '--json'], io);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    const res = JSON.parse(out[0]);
    expect(Object.keys(res)).toEqual(['device', 'losses', 'finalParamsHash', 'stepsPerSec']);
    expect(res.device).toBe('cpu reference');
    expect(res.losses).toHaveLength(2);
    expect(res.finalParamsHash).toMatch(/^[0-9a-f]{8}$/);
    expect(res.stepsPerSec).toBeGreaterThan(0);
  }, 120_000);
});
