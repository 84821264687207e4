// `fsdp-sim compare` on a mesh: the mesh flags, the mesh in the JSON, collectives per process
// group, and usage errors naming the flag.
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';

async function inProcess(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

type Counts = { all_gather: number; reduce_scatter: number; all_reduce: number };
type Result = {
  backend: string;
  collectives: { all_gather: number; reduce_scatter: number };
  collectivesByGroup: Record<string, Counts>;
  exposedCommMs: number;
  exposedCommMsByGroup: Record<string, number>;
  tokensPerSecPerGpu: number;
  stepTimeMs: number;
};

describe('fsdp-sim compare on a mesh', () => {
  it('HSDP 2 × 2 × TP 2: the mesh, and collectives counted per group that add up to the totals', async () => {
    const r = await inProcess([
      'compare',
      '--model',
      'small',
      '--ranks',
      '8',
      '--tp',
      '2',
      '--dp-replicate',
      '2',
      '--json',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { mesh: object; results: Result[] };
    expect(json.mesh).toEqual({ dp_replicate: 2, dp_shard: 2, tp: 2 });
    for (const x of json.results) {
      expect(Object.keys(x.collectivesByGroup)).toEqual(['dp_shard', 'tp', 'dp_replicate']);
      const sum = (k: keyof Counts) => Object.values(x.collectivesByGroup).reduce((a, c) => a + c[k], 0);
      expect(sum('all_gather')).toBe(x.collectives.all_gather);
      expect(sum('reduce_scatter')).toBe(x.collectives.reduce_scatter);
      expect(x.collectivesByGroup.dp_replicate).toMatchObject({ all_gather: 0, reduce_scatter: 0 });
      expect(x.collectivesByGroup.dp_replicate.all_reduce).toBeGreaterThan(0);
      // each group's exposure is part of the rank's; together they cover it (groups may overlap)
      const ex = Object.values(x.exposedCommMsByGroup);
      expect(Object.keys(x.exposedCommMsByGroup).sort()).toEqual(['dp_replicate', 'dp_shard', 'tp']);
      for (const v of ex) expect(v).toBeLessThanOrEqual(x.exposedCommMs + 1e-9);
      expect(ex.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(x.exposedCommMs - 1e-9);
      // a TP group shares its batch: small's 4 × 128 tokens over tp 2
      expect(x.tokensPerSecPerGpu).toBeCloseTo((4 * 128) / 2 / (x.stepTimeMs / 1000), 6);
    }
    const [eager, auto] = json.results;
    expect(auto.collectivesByGroup.dp_shard.all_gather).toBeLessThan(eager.collectivesByGroup.dp_shard.all_gather);
  });

  it('prints the mesh and the per-group launches in the table', async () => {
    const r = await inProcess(['compare', '--model', 'small', '--ranks', '4', '--tp', '2']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/small on 4 × h100 \(FSDP 2 × TP 2\)/);
    expect(r.out).toMatch(
      /^aot_eager: dp_shard: \d+ AG, \d+ RS \(exposed [\d.]+ ms\); tp: \d+ AG, \d+ RS, \d+ AR \(exposed [\d.]+ ms\)$/m,
    );
  });

  it('exits 2 naming the flag when the degrees do not multiply to --ranks', async () => {
    const r = await inProcess(['compare', '--model', 'small', '--ranks', '8', '--tp', '2', '--dp-shard', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        '--dp-shard · parallelism\\.data_parallel_replicate_degree · parallelism\\.tensor_parallel_degree ' +
          'must equal ranks \\(8\\), got 2 · 1 · 2 = 4',
      ),
    );
    const t = await inProcess(['compare', '--model', 'small', '--ranks', '8', '--tp', '3']);
    expect(t.code).toBe(2);
    expect(t.err).toMatch(/--tp .*must divide ranks \(8\)/);
  });
});
