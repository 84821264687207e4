// Every backend on 2-D and 3-D meshes (FSDP × TP, HSDP, HSDP × TP), against the schedule
// invariants of helpers.ts, plus the per-group claims: buckets never mix process groups,
// transformer_block buckets a block's parameter collectives per group and leaves the sequence-
// parallel activation collectives in place, aot_eager keeps program order. And the 405b × 1024
// scale bench on FSDP 128 × TP 8.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { buildStepGraph, collectivesByGroup, type Mesh } from '../../../src/graph';
import { MODEL_PRESETS } from '../../../src/model';
import { simulate } from '../../../src/sim';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from './helpers';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const meshes: Record<string, Mesh> = {
  'FSDP 4 × TP 2': { dpReplicate: 1, dpShard: 4, tp: 2 },
  'HSDP 2 × 4': { dpReplicate: 2, dpShard: 4, tp: 1 },
  'HSDP 2 × 2 × TP 2': { dpReplicate: 2, dpShard: 2, tp: 2 },
};
const graphs = Object.entries(meshes).flatMap(([name, mesh]) =>
  (['none', 'full'] as const).map(
    (ac) =>
      [
        `small, ${name}, AC ${ac}`,
        buildStepGraph({ model: 'small', worldSize: 8, mesh, activationCheckpointing: ac }),
      ] as const,
  ),
);

describe.each(graphs)('every backend on %s', (_name, g) => {
  it.each(BACKEND_NAMES)('%s returns a valid, deterministic schedule that simulates without a hang', (backend) => {
    const s = runBackend(backend, g, cost);
    expectValidSchedule(g, s, backend === 'aot_eager_autobucketing' ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
    expect(runBackend(backend, g, cost)).toEqual(s);
    // every bucket holds collectives of one process group
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    for (const b of s.buckets) expect(new Set(b.members.map((m) => byName.get(m)!.collective!.group)).size).toBe(1);
    const res = simulate({ worldSize: 8, schedules: s, cost });
    expect(res.mismatch).toBeUndefined();
    expect(res.stepUs).toBeGreaterThan(0);
  });
});

describe('a wait of a group whose earlier wait is being handled', () => {
  it("keeps out of prefetch paths: llama3-8b HSDP 2 × 4 on one rank's jittered estimates schedules", () => {
    // this plan once re-entered handleWait without end (RangeError), as torch's pass would
    const g = buildStepGraph({ model: 'llama3-8b', worldSize: 8, mesh: meshes['HSDP 2 × 4'] });
    const base = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
    const rank3 = jitteredCostModels(base, 8, { jitterPct: 30, seed: 5 })[3];
    const s = runBackend('aot_eager_autobucketing', g, rank3);
    expectValidSchedule(g, s, { byteCapBytes: DEFAULT_CAP_BYTES });
    expect(s.reasons.length).toBeGreaterThan(0);
  });
});

describe('per-group bucketing', () => {
  const g = buildStepGraph({ model: 'small', worldSize: 8, mesh: meshes['HSDP 2 × 2 × TP 2'] });
  const L = MODEL_PRESETS.small.nLayers;

  it('aot_eager keeps program order and one launch per collective', () => {
    const s = runBackend('aot_eager', g, cost);
    expect(s.graph.nodes.map((n) => n.name)).toEqual(g.nodes.map((n) => n.name));
    expect(collectivesByGroup(s.graph.nodes)).toEqual(collectivesByGroup(g.nodes));
  });

  it('transformer_block: per block one bucket per (group, kind) of parameter collectives', () => {
    const s = runBackend('transformer_block', g, cost);
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    const seen = new Set<string>();
    for (const b of s.buckets) {
      const ms = b.members.map((m) => byName.get(m)!);
      expect(ms.every((m) => m.params !== undefined)).toBe(true);
      const key = `${ms[0].collective!.group}|${ms[0].kind}|${ms[0].phase}|${ms[0].layer}`;
      expect(new Set(ms.map((m) => `${m.collective!.group}|${m.kind}|${m.phase}|${m.layer}`))).toEqual(new Set([key]));
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
    // each block: forward AG, backward AG and RS on dp_shard, AR on dp_replicate and on tp (the two norms)
    for (let l = 0; l < L; l++) {
      for (const k of [
        'dp_shard|all_gather|forward',
        'dp_shard|all_gather|backward',
        'dp_shard|reduce_scatter|backward',
        'dp_replicate|all_reduce|backward',
        'tp|all_reduce|backward',
      ]) {
        const [grp, kind, phase] = k.split('|');
        expect(seen.has(`${grp}|${kind}|${phase}|${l}`), `${k} layer ${l}`).toBe(true);
      }
    }
    const tpActivation = g.nodes.filter(
      (n) => n.collective?.group === 'tp' && n.kind !== 'wait' && n.params === undefined,
    );
    const outNames = new Set(s.graph.nodes.map((n) => n.name));
    for (const n of tpActivation) expect(outNames.has(n.name), n.name).toBe(true);
  });

  it('aot_eager_autobucketing launches fewer collectives than aot_eager on the mesh', () => {
    const count = (name: 'aot_eager' | 'aot_eager_autobucketing') =>
      runBackend(name, g, cost).graph.nodes.filter((n) => n.collective !== undefined && n.kind !== 'wait').length;
    expect(count('aot_eager_autobucketing')).toBeLessThan(count('aot_eager'));
  });
});
