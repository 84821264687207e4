// A 2-D (FSDP 4 × TP 2) run dumped by tools/fx_dump's backend in torch 2.13 itself
// (test/fixtures/fx_dump_2d/make_fixture.py: torchtitan's TP plan with sequence and loss parallel,
// op SAC, SimpleFSDP 2-D parameters, no mesh passed): the dumps carry each collective's group, so
// they import and `pass --fx-graph` runs on them; without those fields the dp_shard gathers fail.
import { describe, expect, it } from 'vitest';
import { expectCollectiveGroups } from '../../helpers/fx_2d';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { cli } from '../../helpers/cli';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { fixtureUrl } from '../../helpers/fixtures';

const DIR = fixtureUrl('fx_dump_2d/');
const readGz = gzJsonReader(DIR);
const FILES = ['tiny_dp4_tp2_fw.json.gz', 'tiny_dp4_tp2_bw.json.gz'];

interface RawNode {
  name: string;
  target: string;
  group_size?: number;
  group_name?: string;
  mesh_dim?: string;
}
interface Raw {
  world_size: number;
  mesh: Record<string, unknown>;
  nodes: RawNode[];
}

const dumps = (): Raw[] => FILES.map((f) => readGz(f) as Raw);
const isCollective = (n: RawNode) => n.target.startsWith('_c10d_functional.') && !n.target.includes('wait_tensor');

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

describe("fx_dump's own 2-D dump (torch 2.13, dp_shard 4 × tp 2)", () => {
  it('names the mesh, and each collective its group: dp_shard 4, tp 2, the all-reduces too', () => {
    for (const d of dumps()) {
      expect(d.world_size).toBe(8);
      expect(d.mesh).toEqual({ dp_shard: 4, tp: 2, mesh_dim_names: ['dp_shard', 'tp'] });
      const coll = d.nodes.filter(isCollective);
      expect(coll.length).toBeGreaterThan(0);
      for (const n of coll) expect(n.group_size, n.name).toBe(n.mesh_dim === 'dp_shard' ? 4 : 2);
      expect(new Set(coll.map((n) => n.mesh_dim))).toEqual(new Set(['dp_shard', 'tp']));
      expect(coll.some((n) => n.target.includes('all_reduce') && n.mesh_dim === 'tp')).toBe(true);
    }
  });

  it('imports with every collective on its own group and size, dp_shard members tp ranks apart', () => {
    const [fw, bw] = dumps();
    const g = imported([fw, bw]);
    expect(g.meta).toMatchObject({ worldSize: 8, mesh: { dpReplicate: 1, dpShard: 4, tp: 2 } });
    expectCollectiveGroups(
      g,
      [fw, bw].flatMap((d) => d.nodes.filter(isCollective)),
      2,
    );
  });

  it('passes through `pass --fx-graph` under both profiles, counting every collective', async () => {
    const files = FILES.map((f) => new URL(f, DIR).pathname);
    const before = dumps().flatMap((d) => d.nodes.filter(isCollective)).length;
    for (const version of ['2.11', '2.13']) {
      const run = await cli(['pass', '--fx-graph', ...files, '--torch-profile', version, '--json']);
      expect(run.err).toBe('');
      expect(run.code).toBe(0);
      const r = JSON.parse(run.out);
      expect(r.collectivesBefore).toBe(before);
      expect(r.collectivesAfter).toBeLessThan(before); // the dp_shard gathers and scatters bucket
    }
  });

  it('without the group fields the first dp_shard all-gather is refused (what the dumper used to write)', () => {
    const [fw] = dumps();
    const bare = {
      ...fw,
      mesh: undefined,
      nodes: fw.nodes.map(({ group_size, group_name, mesh_dim, ...n }) => n),
    };
    const r = importFxGraph(bare);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const i = fw.nodes.findIndex((n) => n.mesh_dim === 'dp_shard');
    expect(r.error.where).toBe(`nodes[${i}].shape`);
    expect(r.error.message).toMatch(/on 8 ranks \(dim 0 × group size\)/);
  });
});
