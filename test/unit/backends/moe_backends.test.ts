// Every backend on MoE step graphs with expert parallel: schedules stay valid and simulate without
// a hang, and each treats the all-to-alls as torch does. torch's overlap pass (fx_passes/
// bucketing.py bucket_key, get_collective_type) gives all_to_all_single no bucket key, so it is
// never bucketed, while its wait is still schedulable (overlap_scheduling _schedulable_wait_node:
// NCCL_COLL.ALL_TO_ALL); transformer_block leaves collectives without a parameter where they are.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph, type StepGraph } from '../../../src/graph';
import { simulate } from '../../../src/sim';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from './helpers';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const graphs: [string, StepGraph, number][] = [
  [
    'moe-tiny, FSDP 4 × EP 2',
    buildStepGraph({ model: 'moe-tiny', worldSize: 4, mesh: { dpReplicate: 1, dpShard: 4, tp: 1, ep: 2 } }),
    4,
  ],
  [
    'moe-tiny, FSDP 4 × EP 2, AC full',
    buildStepGraph({
      model: 'moe-tiny',
      worldSize: 4,
      activationCheckpointing: 'full',
      mesh: { dpReplicate: 1, dpShard: 4, tp: 1, ep: 2 },
    }),
    4,
  ],
  [
    'dsv3-debug, HSDP 2 × 4 × EP 4, imbalance 1.5',
    buildStepGraph({
      model: 'dsv3-debug',
      worldSize: 8,
      batch: 1,
      seqLen: 512,
      moeLoadImbalance: 1.5,
      mesh: { dpReplicate: 2, dpShard: 4, tp: 1, ep: 4 },
    }),
    8,
  ],
  [
    'dsv3-debug, FSDP 4 × TP 2 × EP 2, AC full',
    buildStepGraph({
      model: 'dsv3-debug',
      worldSize: 8,
      batch: 1,
      seqLen: 512,
      activationCheckpointing: 'full',
      mesh: { dpReplicate: 1, dpShard: 4, tp: 2, ep: 2 },
    }),
    8,
  ],
  [
    'moe-tiny, FSDP 2 × TP 2 (experts split on F)',
    buildStepGraph({ model: 'moe-tiny', worldSize: 4, mesh: { dpReplicate: 1, dpShard: 2, tp: 2 } }),
    4,
  ],
];

const a2aNames = (g: StepGraph) => g.nodes.filter((n) => n.kind === 'all_to_all').map((n) => n.name);

describe.each(graphs)('every backend on %s', (_name, g, world) => {
  it.each(BACKEND_NAMES)('%s: valid, deterministic, no hang; all-to-alls never bucketed, kept in order', (backend) => {
    const s = runBackend(backend, g, cost);
    expectValidSchedule(g, s, backend === 'aot_eager_autobucketing' ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
    expect(runBackend(backend, g, cost)).toEqual(s);
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    for (const b of s.buckets) {
      expect(
        b.members.some((m) => byName.get(m)!.kind === 'all_to_all'),
        b.node,
      ).toBe(false);
      expect(new Set(b.members.map((m) => byName.get(m)!.collective!.group)).size).toBe(1);
    }
    // every all-to-all is still there, once, in program order (the ep group runs them in issue order)
    expect(a2aNames(s.graph)).toEqual(a2aNames(g));
    const res = simulate({ worldSize: world, schedules: s, cost });
    expect(res.mismatch).toBeUndefined();
    expect(res.stepUs).toBeGreaterThan(0);
  });
});

describe("torch's overlap pass on an MoE graph", () => {
  const [, g] = graphs[0];

  it("buckets the expert weights' collectives on efsdp apart from the dense ones on dp", () => {
    const s = runBackend('aot_eager_autobucketing', g, cost);
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    const groups = new Set(s.buckets.map((b) => byName.get(b.members[0])!.collective!.group));
    expect(groups).toEqual(new Set(['dp', 'efsdp']));
  });

  it("moves compute into an all-to-all's window: less exposed ep time than program order", () => {
    const exposedEp = (backend: string) => {
      const res = simulate({ worldSize: 4, schedules: runBackend(backend, g, cost), cost });
      const waits = res.events.filter((e) => e.kind === 'wait' && e.name.includes('all_to_all'));
      return waits.reduce((sum, e) => sum + e.dur, 0);
    };
    expect(exposedEp('aot_eager_autobucketing')).toBeLessThan(exposedEp('aot_eager'));
  });
});
