// The autobucketing port against torch 2.13's own pass, on the graphs torch passed with every
// node's runtime fixed (test/fixtures/torch_pass): the same schedule order, the same prefetches,
// the same buckets, the same exposure accounting and memory estimates, decision for decision.
import { describe, expect, it } from 'vitest';
import { type TorchPassExpected, gzJsonReader } from '../../helpers/torch_fixtures';
import { runAutobucketing } from '../../../src/backends';
import { indexGraph } from '../../../src/backends/graph_index';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { buildTorchGraph, passRegions } from '../../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../../src/backends/autobucketing/torch_scheduler';
import { makeCostModel } from '../../../src/estimate';
import { importFxGraph } from '../../../src/graph';
import { fixtureUrl } from '../../helpers/fixtures';

const readGz = gzJsonReader(fixtureUrl('torch_pass/'));

interface Expected extends TorchPassExpected {
  readonly allowedPeakBytes: number;
}

const EXPECTED = readGz('expected.json.gz') as Record<'main' | 'memzero', Record<string, Expected>>;
const GRAPHS = [...new Set(Object.keys(EXPECTED.main).map((k) => k.replace(/_(fw|bw)$/, '')))];
// the cost model only times what a dump leaves out; every node here carries torch's estimate
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
// torch was run with the 2.11-style arguments (pre-bucketing off): the port's 'torch-2.11' profile
const TORCH_2_11 = AUTOBUCKETING_PROFILES['torch-2.11'];

type Dump = { nodes: { kind?: string; est_ms?: number }[] };

/** The forward and backward dumps of a graph; memzero sets every memory-bound node's estimate to 0. */
function dumps(graph: string, variant: 'main' | 'memzero'): Dump[] {
  return ['fw', 'bw'].map((p) => {
    const d = readGz(`fx/${graph}_${p}.json.gz`) as Dump;
    if (variant === 'memzero') for (const n of d.nodes) if (n.kind === 'memory') n.est_ms = 0;
    return d;
  });
}

/** Graphs whose baseline peak the dump cannot reproduce exactly (see the test), and by how much. */
const KNOWN_STORAGE_GAP: Readonly<Record<string, number>> = { llama70b_2layer_seq2048_recompute_bw: 32 * 2 ** 20 };

const sortedSets = (bs: readonly (readonly string[])[]) =>
  bs.map((b) => [...b].sort()).sort((a, b) => a.join().localeCompare(b.join()));

describe.each(['main', 'memzero'] as const)('torch 2.13 reference graphs (%s)', (variant) => {
  it.each(GRAPHS)("%s: torch's buckets, prefetches, counts and exposure", (graph) => {
    const imported = importFxGraph(dumps(graph, variant));
    if (!imported.ok) throw imported.error;
    const s = runAutobucketing(imported.value, cost, TORCH_2_11);
    const stats = s.passStats ?? [];
    expect(stats.map((p) => p.phase)).toEqual(['forward', 'backward']);
    for (const p of stats) {
      const want = EXPECTED[variant][`${graph}_${p.phase === 'forward' ? 'fw' : 'bw'}`];
      expect(sortedSets(p.buckets), 'bucket sets').toEqual(sortedSets(want.buckets));
      expect(p.buckets, 'buckets, seed first, in join order').toEqual(want.buckets);
      expect(p.overlapping).toEqual(want.overlapping);
      expect(p.collectivesBefore).toBe(want.collectivesBefore);
      expect(p.collectivesAfter).toBe(want.collectivesAfter);
      expect(p.scheduledExposedMs).toBeCloseTo(want.totalExposedMs, 9);
      expect(p.potentialExposedMs).toBeCloseTo(want.potentialExposedMs, 9);
      // torch's fake tensors let a recomputed node share the storage of the activation it
      // recomputes; a dump does not record storages, so that one graph reads 32 MiB lower
      const storageGap = KNOWN_STORAGE_GAP[`${graph}_${p.phase === 'forward' ? 'fw' : 'bw'}`] ?? 0;
      expect(p.originalPeakBytes + storageGap).toBe(want.originalPeakBytes);
      expect(p.allowedPeakBytes + storageGap).toBe(want.allowedPeakBytes);
      expect(p.peakBytes).toBe(want.peakBytes);
    }
    // the rewritten graph holds one collective per bucket plus every unbucketed one
    const colls = s.graph.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter').length;
    expect(colls).toBe(stats.reduce((a, p) => a + p.collectivesAfter, 0));
  });

  it.each(GRAPHS)("%s: torch's schedule order, node for node", (graph) => {
    const imported = importFxGraph(dumps(graph, variant));
    if (!imported.ok) throw imported.error;
    const ix = indexGraph(imported.value);
    for (const region of passRegions(ix)) {
      const tg = buildTorchGraph(ix, cost, region);
      const sched = scheduleOverlap(tg, TORCH_2_11);
      const want = EXPECTED[variant][`${graph}_${region.phase === 'forward' ? 'fw' : 'bw'}`];
      expect(sched.order.map((t) => tg.name[t].replace(/\.bw$/, ''))).toEqual(want.scheduleOrder);
    }
  });
});

describe('torch 2.13 reference graphs, one FX graph at a time', () => {
  it('a forward dump alone gets the same decisions as in the joined import', () => {
    const [fw] = dumps('llama8b_2layer_seq2048_saved', 'main');
    const imported = importFxGraph(fw);
    if (!imported.ok) throw imported.error;
    const [p] = runAutobucketing(imported.value, cost, TORCH_2_11).passStats ?? [];
    expect(p.buckets).toEqual(EXPECTED.main.llama8b_2layer_seq2048_saved_fw.buckets);
    expect(p.overlapping).toEqual(EXPECTED.main.llama8b_2layer_seq2048_saved_fw.overlapping);
  });
});

interface Generated {
  readonly knobs: Record<string, number | boolean | null | string>;
  readonly buckets: string[][];
  readonly overlapping: Record<string, string[]>;
  readonly collectivesAfter: number;
  readonly totalExposedMs: number;
  readonly peakBytes: number;
}

/** torch's pass arguments as the port's options (None → 0 for max_off_bucket_gb, the tri-state as a string). */
function optionsOf(knobs: Generated['knobs']): Record<string, number | boolean | string> {
  const names = [
    'max_in_flight_gb',
    'max_compute_pre_fetch',
    'max_coll_distance',
    'compute_overlap_multipler',
    'max_memory_increase_gb',
    'max_memory_increase_ratio',
    'collective_bucketing',
    'prioritize_bucketing_during_scheduling',
    'bucket_only_internode_comms',
    'pre_bucketing_fsdp_collectives',
  ];
  const out: Record<string, number | boolean | string> = { ...TORCH_2_11 };
  for (const k of names)
    if (typeof knobs[k] === 'number' || typeof knobs[k] === 'boolean') out[k] = knobs[k] as number | boolean;
  out.max_off_bucket_gb = typeof knobs.max_off_bucket_gb === 'number' ? knobs.max_off_bucket_gb : 0;
  out.bucket_exposed_first = knobs.bucket_exposed_first === null ? 'auto' : String(knobs.bucket_exposed_first);
  return out;
}

describe('graphs torch passed beyond the reference: other shapes, worlds 16 and 128, other knob values', () => {
  const generated = readGz('generated/expected.json.gz') as Record<string, Generated>;
  const pairs = [...new Set(Object.keys(generated).map((k) => k.replace(/_(fw|bw)$/, '')))];
  it.each(pairs)('%s', (pair) => {
    const [set, graph] = pair.split('/');
    const fx = ['fw', 'bw'].map((p) => readGz(`generated/fx/${set}__${graph}_${p}.json.gz`));
    const imported = importFxGraph(fx);
    if (!imported.ok) throw imported.error;
    const want = ['fw', 'bw'].map((p) => generated[`${pair}_${p}`]);
    const s = runAutobucketing(imported.value, cost, optionsOf(want[0].knobs));
    (s.passStats ?? []).forEach((p, k) => {
      expect(p.buckets).toEqual(want[k].buckets);
      expect(p.overlapping).toEqual(want[k].overlapping);
      expect(p.collectivesAfter).toBe(want[k].collectivesAfter);
      expect(p.scheduledExposedMs).toBeCloseTo(want[k].totalExposedMs, 9);
      expect(p.peakBytes).toBe(want[k].peakBytes);
    });
  });
});
