// Mesh geometry of live ranks: group instances as torchtitan lays the mesh out, data-parallel rows,
// and TP slices of parameters that reassemble to the full tensor.
import { describe, expect, it } from 'vitest';
import { buildStepGraph } from '../../../src/graph';
import { dataParallelRank, meshGroupInstance, tpAssemble, tpSlice, tpSplitDim } from '../../../src/runtime/mesh_ranks';
import { createMeshComms, maxElemsByGroup } from '../../../src/runtime/mesh_comms';

const mesh = { dpReplicate: 2, dpShard: 2, tp: 2 }; // ranks: rep · 4 + shard · 2 + tp

describe('mesh ranks', () => {
  it('puts consecutive ranks in a tp group, tp-strided ones in dp_shard, and the halves in dp_replicate', () => {
    expect(meshGroupInstance(mesh, 'tp', 5)).toEqual({ group: 'tp', members: [4, 5], localRank: 1 });
    expect(meshGroupInstance(mesh, 'dp_shard', 5)).toEqual({ group: 'dp_shard', members: [5, 7], localRank: 0 });
    expect(meshGroupInstance(mesh, 'dp_replicate', 5)).toEqual({
      group: 'dp_replicate',
      members: [1, 5],
      localRank: 1,
    });
    expect(() => meshGroupInstance(mesh, 'dp', 0)).toThrow(/process group 'dp' is not a dimension of the mesh/);
    // a 1-D mesh keeps SimpleFSDP's one group
    const fsdp4 = { dpReplicate: 1, dpShard: 4, tp: 1 };
    expect(meshGroupInstance(fsdp4, 'dp', 2)).toEqual({ group: 'dp', members: [0, 1, 2, 3], localRank: 2 });
  });

  it('gives the ranks of one tp group the same data-parallel rows', () => {
    const dp = Array.from({ length: 8 }, (_, r) => dataParallelRank(mesh, r).index);
    expect(dp).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
    expect(dataParallelRank(mesh, 0).size).toBe(4);
  });

  it('slices column-wise weights on dim 0, row-wise ones on dim 1, and reassembles them', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 4, mesh: { dpReplicate: 1, dpShard: 2, tp: 2 } });
    const byName = (n: string) => g.params.find((p) => p.name === n) ?? expect.unreachable(n);
    const wq = byName('layers.0.attention.wq.weight');
    const wo = byName('layers.0.attention.wo.weight');
    const norm = byName('layers.0.attention_norm.weight');
    expect([tpSplitDim(wq), tpSplitDim(wo), tpSplitDim(norm)]).toEqual([0, 1, -1]);
    for (const p of [wq, wo, norm]) {
      const full = Float32Array.from({ length: p.numel }, (_, i) => i);
      const slices = [0, 1].map((t) => tpSlice(full, p, t, 2));
      expect([...tpAssemble(slices, p)]).toEqual([...full]);
    }
    // wo [D, H·hd] row-wise: rank 1 holds the second half of every row
    const D = wo.shape[0];
    const cols = wo.shape[1];
    const full = Float32Array.from({ length: wo.numel }, (_, i) => i);
    expect(tpSlice(full, wo, 1, 2)[0]).toBe(cols / 2);
    expect(tpSlice(full, wo, 1, 2).length).toBe((D * cols) / 2);
  });

  it('builds one communicator per group instance, each sized for its largest chunk', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 8, batch: 2, paramDtype: 'fp32', reduceDtype: 'fp32', mesh });
    const sizes = maxElemsByGroup(g);
    expect([...sizes.keys()]).toEqual(['dp_replicate', 'dp_shard', 'tp']);
    const comms = createMeshComms(g, { timeoutMs: 1000, algorithm: 'direct' });
    expect(comms[5].map((c) => [c.group, c.localRank, c.init.group?.ranks])).toEqual([
      ['dp_replicate', 1, [1, 5]],
      ['dp_shard', 0, [5, 7]],
      ['tp', 1, [4, 5]],
    ]);
    // the two members of a group share its buffers
    const tpOf = (rank: number) => comms[rank].find((c) => c.group === 'tp')?.init.control;
    expect(tpOf(4)).toBe(tpOf(5));
    for (const c of comms[5]) expect(c.init.maxElemsPerRank).toBe(sizes.get(c.group));
  });

  it('gives an expert-parallel MoE run ep and efsdp groups, ep sized for the worst routing', () => {
    const moe = { dpReplicate: 1, dpShard: 4, tp: 1, ep: 2 };
    const g = buildStepGraph({
      model: 'moe-tiny',
      worldSize: 4,
      batch: 1,
      paramDtype: 'fp32',
      reduceDtype: 'fp32',
      mesh: moe,
    });
    const comms = createMeshComms(g, { timeoutMs: 1000, algorithm: 'direct' });
    expect(comms[1].map((c) => [c.group, c.localRank, c.init.group?.ranks])).toEqual([
      ['dp', 1, [0, 1, 2, 3]],
      ['ep', 1, [0, 1]],
      ['efsdp', 0, [1, 3]],
    ]);
    // every rank of the ep group may send all its T·k rows of D to one rank: its region (n·M) holds them all
    const rowsOfOneRank = g.meta.batch * g.meta.seqLen * 2 * 64; // T·k·D: moe-tiny routes to 2 experts, dim 64
    const ep = comms[1].find((c) => c.group === 'ep');
    expect(ep!.init.maxElemsPerRank).toBeGreaterThanOrEqual(rowsOfOneRank);
  });
});
