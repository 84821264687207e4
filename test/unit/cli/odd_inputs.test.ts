// Odd inputs (trace files without GPU kernels, a non-UTF-8 dump, sweep budgets): the CLI defects
// they found. Each case failed before its fix; every input is made here, in a fresh temporary folder.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDirs } from '../../helpers/cli';
import { fixturePath } from '../../helpers/fixtures';

const tempDir = tempDirs('fsdp-sim-odd-');
const RANK1 = fixturePath('kineto/rank1.pt.trace.json');
const TINY_FW = fixturePath('fx/tiny_4layer_fw.json');

describe('calibrate: a rank file without GPU kernels', () => {
  it('is refused, naming the file (it was averaged in as a rank that ran nothing: scales halved)', async () => {
    const empty = join(tempDir(), 'rank0.pt.trace.json');
    writeFileSync(empty, JSON.stringify({ distributedInfo: { rank: 0, world_size: 2 }, traceEvents: [] }));
    const r = await cli(['calibrate', empty, RANK1, '--ranks', '2']);
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toContain(empty);
    expect(r.err).toMatch(/no GPU kernels/);
    expect(r.out).toBe('');
  });
});

describe('analyze: a rank file without GPU kernels among others', () => {
  it('is refused, naming the file (it was left out of the report unsaid, and escaped the rank check)', async () => {
    const dir = tempDir();
    const rank0 = fixturePath('kineto/rank0.pt.trace.json');
    for (const rank of [0, 1]) {
      const empty = join(dir, `rank${rank}.json`);
      writeFileSync(empty, JSON.stringify({ distributedInfo: { rank, world_size: 2 }, traceEvents: [] }));
      const r = await cli(['analyze', rank0, empty]);
      expect(r.code).toBe(1);
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toMatch(new RegExp(`^fsdp-sim analyze: ${empty}: file\\[1\\] holds no GPU kernels`));
      expect(r.out).toBe('');
    }
  });
});

describe('pass: an FX dump that is not UTF-8', () => {
  it('is refused as such, not as a node whose input is missing', async () => {
    const f = join(tempDir(), 'fw.json');
    const bytes = readFileSync(TINY_FW);
    const at = bytes.indexOf('"primals_1"') + 'primals_'.length + 1;
    writeFileSync(f, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff, 0xfe]), bytes.subarray(at + 1)]));
    const r = await cli(['pass', '--fx-graph', f]);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^fsdp-sim pass: \S*fw\.json is not UTF-8 text/);
    expect(r.err).not.toMatch(/not an earlier node/);
  });
});

describe('sweep --budget-min', () => {
  it.each(['0x10', 'Infinity', ' 5', '1e309'])('takes decimal minutes only, as config numbers do: %j', async (v) => {
    const r = await cli(['sweep', '--vary', 'ranks=2,4', `--budget-min=${v}`]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`fsdp-sim sweep: --budget-min must be a number of minutes > 0, got '${v}'`);
    expect(r.out).toBe('');
  });
});
