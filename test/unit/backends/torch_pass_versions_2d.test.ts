// 2-D (FSDP × TP) graphs torch 2.15.0 traced and passed with its own defaults
// (test/fixtures/torch_pass_2d/v2_15: the meshes and depths of ../torch_pass_2d, dp 2 and 4 × tp 2
// and 4, 1 and 2 layers, traced again under 2.15): the port's 'torch-2.15' profile makes torch's
// pre-buckets and reaches torch's schedule, buckets, prefetches, exposure and peaks. These graphs
// carry collectives on two process groups, where 2.15's guard_nested_waits can act.
import { describe, expect, it } from 'vitest';
import { expectPhaseStats } from '../../helpers/prebucket';
import { type TorchPassExpected, gzJsonReader } from '../../helpers/torch_fixtures';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing/options';
import { preBucketFsdp } from '../../../src/backends/autobucketing/pre_bucket';
import { buildTorchGraph, passRegions } from '../../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../../src/backends/graph_index';
import { makeCostModel } from '../../../src/estimate';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../../src/estimate/nccl_2_13';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { fixtureUrl } from '../../helpers/fixtures';

interface Expected extends TorchPassExpected {
  readonly torch: string;
  readonly knobs: Record<string, number | boolean | string | null>;
  readonly bucketsApplied: string[][];
  readonly prebuckets: string[][];
  readonly allowedPeakBytes: number;
}

const readGz = gzJsonReader(fixtureUrl('torch_pass_2d/v2_15/'));
const EXPECTED = (readGz('expected.json.gz') as { CA: Record<string, Expected> }).CA;
const GRAPHS = [...new Set(Object.keys(EXPECTED).map((k) => k.replace(/_(fw|bw)$/, '')))];
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.15'];
// the cost model only times what a dump leaves out; every node here carries torch's estimate
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const want = (graph: string, phase: string) => EXPECTED[`${graph}_${phase === 'forward' ? 'fw' : 'bw'}`];

function load(graph: string): StepGraph {
  const r = importFxGraph(['fw', 'bw'].map((p) => readGz(`fx/${graph}_${p}.json.gz`)));
  if (!r.ok) throw r.error;
  return r.value;
}

describe('torch 2.15 defaults on 2-D graphs torch 2.15.0 traced', () => {
  it('8 meshes × depths, made by torch 2.15.0 with the knobs the torch-2.15 profile claims', () => {
    expect(GRAPHS).toHaveLength(8);
    for (const w of Object.values(EXPECTED)) {
      expect(w.torch).toMatch(/^2\.15\.0/);
      expect(w.knobs.pre_bucketing_fsdp_collectives).toBe(PROFILE.pre_bucketing_fsdp_collectives);
      expect(w.knobs.max_off_bucket_gb).toBe(PROFILE.max_off_bucket_gb);
      expect(w.knobs.bucket_exposed_first).toBeNull();
      expect(w.knobs.max_in_flight_gb).toBe(PROFILE.max_in_flight_gb);
    }
  });

  it.each(GRAPHS)("%s: torch's pre-buckets, buckets, prefetches, counts, exposure and peaks", (graph) => {
    const s = runAutobucketing(load(graph), cost, PROFILE);
    expect(s.torchProfile).toBe('torch-2.15');
    const stats = s.passStats ?? [];
    expect(stats.map((p) => p.phase)).toEqual(['forward', 'backward']);
    for (const p of stats) {
      const w = want(graph, p.phase);
      expectPhaseStats(p, w);
      expect(p.preBucketing?.buckets ?? [], 'pre-buckets').toEqual(w.prebuckets);
      const pre = new Set(w.prebuckets.map((b) => b.join()));
      expect(
        p.buckets.filter((b) => !pre.has(b.join())),
        'buckets in join order',
      ).toEqual(w.bucketsApplied);
      expect(p.originalPeakBytes).toBe(w.originalPeakBytes);
      expect(p.allowedPeakBytes).toBe(w.allowedPeakBytes);
    }
  });

  it.each(GRAPHS)("%s: torch's schedule order on the pre-bucketed graph, node for node", (graph) => {
    // a node pre-bucketing creates is named from the FX namespace, which in 2.15's forward still
    // holds names of nodes the trace erased (torch's clone_29 is the port's clone_24): such nodes
    // are compared by op, every node of the dump by name
    const dumps = ['fw', 'bw'].map((p) => readGz(`fx/${graph}_${p}.json.gz`) as { nodes: { name: string }[] });
    const g = load(graph);
    const pre = preBucketFsdp(g, PROFILE, NCCL_213_DEFAULT_TOPOLOGY);
    expect(pre).not.toBeNull();
    const ix = indexGraph(pre!.graph);
    for (const region of passRegions(ix)) {
      const dumped = new Set(dumps[region.phase === 'forward' ? 0 : 1].nodes.map((n) => n.name));
      const named = (xs: readonly string[]) => xs.map((x) => (dumped.has(x) ? x : `new ${x.replace(/_\d+$/, '')}`));
      const tg = buildTorchGraph(ix, cost, region);
      const order = scheduleOverlap(tg, PROFILE).order.map((t) => tg.name[t].replace(/\.bw$/, ''));
      expect(named(order)).toEqual(named(want(graph, region.phase).scheduleOrder));
    }
  });
});
