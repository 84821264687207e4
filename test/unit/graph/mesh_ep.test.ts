// Expert parallel on the mesh: torchtitan ParallelDims' sparse mesh [dp_replicate, efsdp, ep]
// (ep innermost, efsdp = dp_shard · tp / ep), its validation, and the config's checks.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config';
import type { ConfigError } from '../../../src/errors';
import { describeMesh, meshGroup, resolveMesh, resolveStepConfig, type Mesh } from '../../../src/graph';
import { groupInstance } from '../../../src/sim';

const F = { dpReplicate: 'rep', dpShard: 'shard', tp: 'tp', ep: 'ep' };

/** The rank's coordinates on torchtitan's sparse mesh, unflattened row-major from the world. */
function sparseCoords(m: Mesh, r: number) {
  const ep = m.ep ?? 1;
  const efsdp = (m.dpShard * m.tp) / ep;
  return { dp_replicate: Math.floor(r / (efsdp * ep)), efsdp: Math.floor(r / ep) % efsdp, ep: r % ep };
}

describe('expert-parallel mesh', () => {
  it('resolves ep beside the dense degrees and names it', () => {
    const m = resolveMesh(8, { dpReplicate: 1, dpShard: -1, tp: 1, ep: 2 }, F);
    expect(m).toEqual({ dpReplicate: 1, dpShard: 8, tp: 1, ep: 2 });
    expect(describeMesh(m)).toBe('FSDP 8 × EP 2');
    expect(meshGroup(m, 'ep')).toEqual({ group: 'ep', size: 2, stride: 1 });
    expect(meshGroup(m, 'efsdp')).toEqual({ group: 'efsdp', size: 4, stride: 2 });
    // ep 1 leaves the mesh as it was, experts on the dense FSDP group
    const noEp = resolveMesh(8, { dpReplicate: 1, dpShard: -1, tp: 1, ep: 1 }, F);
    expect(noEp).toEqual({ dpReplicate: 1, dpShard: 8, tp: 1 });
    expect(meshGroup({ dpReplicate: 1, dpShard: 8, tp: 1 }, 'efsdp')).toEqual({ group: 'dp', size: 8, stride: 1 });
  });

  it('refuses an ep that does not divide dp_shard · tp, as torchtitan ParallelDims does', () => {
    try {
      resolveMesh(12, { dpReplicate: 2, dpShard: 3, tp: 2, ep: 4 }, F);
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).field).toBe('ep');
      expect((e as Error).message).toContain('ep (4) must divide shard · tp (3 · 2 = 6)');
    }
  });

  it.each([
    [{ dpReplicate: 1, dpShard: 8, tp: 1, ep: 2 }],
    [{ dpReplicate: 2, dpShard: 4, tp: 1, ep: 4 }],
    [{ dpReplicate: 2, dpShard: 2, tp: 2, ep: 2 }],
  ])('groups the ranks that differ only in their ep / efsdp coordinate (%o)', (m: Mesh) => {
    const world = m.dpReplicate * m.dpShard * m.tp;
    for (const dim of ['ep', 'efsdp'] as const) {
      const g = meshGroup(m, dim);
      for (let r = 0; r < world; r++) {
        const inst = groupInstance(r, g.size, world, g.stride);
        const members = Array.from({ length: inst.size }, (_, i) => inst.first + i * inst.stride);
        const mine = sparseCoords(m, r);
        const other = dim === 'ep' ? 'efsdp' : 'ep';
        const expected = Array.from({ length: world }, (_, q) => q).filter((q) => {
          const c = sparseCoords(m, q);
          return c.dp_replicate === mine.dp_replicate && c[other] === mine[other];
        });
        expect(members, `${dim} rank ${r}`).toEqual(expected);
      }
    }
  });
});

describe('expert parallel in the configs', () => {
  it('refuses ep on a dense model and an ep that does not divide the experts, naming the field', () => {
    const dense = validateConfig({ model: 'tiny', ranks: 4, parallelism: { expert_parallel_degree: 2 } });
    expect(dense.ok).toBe(false);
    if (!dense.ok) expect(dense.error.field).toBe('parallelism.expert_parallel_degree');
    const odd = validateConfig({ model: 'moe-tiny', ranks: 8, parallelism: { expert_parallel_degree: 8 } });
    expect(odd.ok).toBe(false);
    if (!odd.ok) expect(odd.error.message).toContain("must divide the model's 4 routed experts");
    expect(validateConfig({ model: 'moe-tiny', ranks: 4, parallelism: { expert_parallel_degree: 2 } }).ok).toBe(true);
  });

  it('the step config takes TP and selective AC on MoE models and refuses an imbalance below 1', () => {
    const mesh = { dpReplicate: 1, dpShard: 4, tp: 1, ep: 2 };
    expect(() => resolveStepConfig({ model: 'tiny', worldSize: 4, mesh })).toThrow('needs an MoE model');
    // TP of MoE blocks is modelled (moe_tp.test.ts holds its shapes and refusals)
    expect(resolveStepConfig({ model: 'moe-tiny', worldSize: 4, mesh: { ...mesh, dpShard: 2, tp: 2 } }).mesh.tp).toBe(
      2,
    );
    const sac = resolveStepConfig({ model: 'moe-tiny', worldSize: 4, mesh, activationCheckpointing: 'selective' });
    expect(sac.activationCheckpointing).toBe('selective');
    expect(() => resolveStepConfig({ model: 'moe-tiny', worldSize: 4, mesh, moeLoadImbalance: 0.5 })).toThrow(
      'moeLoadImbalance must be a number in [1, 65536]',
    );
    const skewed = resolveStepConfig({ model: 'moe-tiny', worldSize: 4, mesh, moeLoadImbalance: 1.5 });
    expect(skewed.moeLoadImbalance).toBe(1.5);
  });
});
