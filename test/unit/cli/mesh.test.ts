// `fsdp-sim compare` on a mesh: the mesh flags, the mesh in the JSON, collectives per process
// group, and usage errors naming the flag.
import { describe, expect, it } from 'vitest';
import { cli as inProcess } from '../../helpers/cli';

type Counts = { all_gather: number; reduce_scatter: number; all_reduce: number };
type Result = {
  backend: string;
  collectives: Record<string, Counts>;
  collectivesTotal: Counts;
  exposedCommMs: number;
  exposedCommMsByGroup: Record<string, number>;
  tokensPerSecPerGpu: number;
  stepTimeMs: number;
};
const KINDS = ['all_gather', 'reduce_scatter', 'all_reduce'] as const;

async function compareJson(args: string[]) {
  const r = await inProcess(['compare', ...args, '--json']);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as { mesh: object; results: Result[] };
}

/** `collectives` is per group, every group has the three kinds, and the groups add up to `collectivesTotal`. */
function expectPerGroup(x: Result, groups: string[]): void {
  expect(Object.keys(x.collectives)).toEqual(groups);
  for (const c of Object.values(x.collectives)) expect(Object.keys(c)).toEqual([...KINDS]);
  for (const k of KINDS) {
    const sum = Object.values(x.collectives).reduce((a, c) => a + c[k], 0);
    expect(sum, k).toBe(x.collectivesTotal[k]);
  }
}

describe('fsdp-sim compare on a mesh', () => {
  it('HSDP 2 × 2 × TP 2: the mesh, and collectives counted per group that add up to the total', async () => {
    const json = await compareJson(['--model', 'small', '--ranks', '8', '--tp', '2', '--dp-replicate', '2']);
    expect(json.mesh).toEqual({ dp_replicate: 2, dp_shard: 2, tp: 2 });
    for (const x of json.results) {
      expectPerGroup(x, ['dp_shard', 'tp', 'dp_replicate']);
      expect(x.collectives.dp_replicate).toMatchObject({ all_gather: 0, reduce_scatter: 0 });
      expect(x.collectives.dp_replicate.all_reduce).toBeGreaterThan(0);
      // each group's exposure is part of the rank's; together they cover it (groups may overlap)
      const ex = Object.values(x.exposedCommMsByGroup);
      expect(Object.keys(x.exposedCommMsByGroup).sort()).toEqual(['dp_replicate', 'dp_shard', 'tp']);
      for (const v of ex) expect(v).toBeLessThanOrEqual(x.exposedCommMs + 1e-9);
      expect(ex.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(x.exposedCommMs - 1e-9);
      // a TP group shares its batch: small's 4 × 128 tokens over tp 2
      expect(x.tokensPerSecPerGpu).toBeCloseTo((4 * 128) / 2 / (x.stepTimeMs / 1000), 6);
    }
    const [eager, auto] = json.results;
    expect(auto.collectives.dp_shard.all_gather).toBeLessThan(eager.collectives.dp_shard.all_gather);
  });

  it('the total is what the table counts (the trace metrics), per backend', async () => {
    const args = ['--model', 'small', '--ranks', '4', '--tp', '2'];
    const json = await compareJson(args);
    const table = await inProcess(['compare', ...args]);
    for (const x of json.results) {
      const row = table.out
        .split('\n')
        .find((l) => l.startsWith(`${x.backend} `))!
        .trim()
        .split(/\s+/);
      // #AG and #RS are the two columns before the HBM verdict
      expect(row.slice(-3, -1).map(Number)).toEqual([x.collectivesTotal.all_gather, x.collectivesTotal.reduce_scatter]);
    }
  });

  // the acceptance commands: llama3-70b on 64 ranks as FSDP 8 × TP 8, and with HSDP 2 on top
  it.each([
    [[], { dp_replicate: 1, dp_shard: 8, tp: 8 }, ['dp_shard', 'tp']],
    [['--dp-replicate', '2'], { dp_replicate: 2, dp_shard: 4, tp: 8 }, ['dp_shard', 'tp', 'dp_replicate']],
  ])('llama3-70b --ranks 64 --tp 8 %j: collectives per group', async (extra, mesh, groups) => {
    const json = await compareJson(['--model', 'llama3-70b', '--ranks', '64', '--tp', '8', ...extra]);
    expect(json.mesh).toEqual(mesh);
    const [eager, auto] = json.results;
    for (const x of json.results) expectPerGroup(x, groups);
    // the pass buckets FSDP's all-gathers; TP's activation collectives sit on the critical path
    expect(auto.collectives.dp_shard.all_gather).toBeLessThan(eager.collectives.dp_shard.all_gather);
    expect(auto.collectives.tp).toEqual(eager.collectives.tp);
    // sequence parallel: all-gather before attention and the feed-forward, reduce-scatter after wo and w2
    expect(eager.collectives.tp.all_gather).toBeGreaterThanOrEqual(2 * 80);
    expect(eager.collectives.tp.reduce_scatter).toBeGreaterThanOrEqual(2 * 80);
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
