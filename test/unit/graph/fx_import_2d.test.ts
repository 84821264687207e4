// 2-D (FSDP × TP) graphs torch 2.13 traced and passed (test/fixtures/torch_pass_2d: torchtitan's TP
// plan with sequence and loss parallel, op SAC, SimpleFSDP 2-D parameters; dp 2 and 4 × tp 2 and 4,
// 1 and 2 layers): they import, every collective on its own group, and the port decides on them as
// torch did under both knob profiles — buckets, prefetches, counts, exposure and memory estimates.
import { describe, expect, it } from 'vitest';
import { expectCollectiveGroups } from '../../helpers/fx_2d';
import { expectPhaseStats, expectScheduleOrder } from '../../helpers/prebucket';
import { type TorchPassExpected, gzJsonReader } from '../../helpers/torch_fixtures';
import { runAutobucketing } from '../../../src/backends';
import { cli } from '../../helpers/cli';
import {
  AUTOBUCKETING_PROFILES,
  profileOf,
  type AutobucketingOptions,
} from '../../../src/backends/autobucketing/options';
import { makeCostModel } from '../../../src/estimate';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { fixtureUrl } from '../../helpers/fixtures';
import type { RawFxDump } from '../../helpers/fx_raw';

const DIR = fixtureUrl('torch_pass_2d/');
const readGz = gzJsonReader(DIR);

interface Expected extends TorchPassExpected {
  readonly knobs: Record<string, number | boolean | string | null>;
  readonly bucketsApplied: string[][];
  readonly prebuckets: string[][];
  readonly allowedPeakBytes: number;
}
/** A 2-D dump: its mesh gives the dp_shard and tp sizes. */
type Raw = RawFxDump & { mesh: { dp_shard: number; tp: number } };

const PROFILES = { C: 'torch-2.11', CA: 'torch-2.13' } as const;
const EXPECTED = readGz('expected.json.gz') as Record<keyof typeof PROFILES, Record<string, Expected>>;
const GRAPHS = [...new Set(Object.keys(EXPECTED.C).map((k) => k.replace(/_(fw|bw)$/, '')))];
// the cost model only times what a dump leaves out; every node here carries torch's estimate
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const dumps = (graph: string): Raw[] => ['fw', 'bw'].map((p) => readGz(`fx/${graph}_${p}.json.gz`) as Raw);
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

/** torch's pass arguments as the port's options (None → 0 for max_off_bucket_gb, the tri-state as a string). */
function optionsOf(knobs: Expected['knobs']): Partial<AutobucketingOptions> {
  const out: Record<string, number | boolean | string> = {};
  for (const [k, v] of Object.entries(knobs))
    if (k in AUTOBUCKETING_PROFILES['torch-2.11'] && (typeof v === 'number' || typeof v === 'boolean')) out[k] = v;
  out.max_off_bucket_gb = typeof knobs.max_off_bucket_gb === 'number' ? knobs.max_off_bucket_gb : 0;
  out.bucket_exposed_first = knobs.bucket_exposed_first === null ? 'auto' : String(knobs.bucket_exposed_first);
  return out as Partial<AutobucketingOptions>;
}

const sortedSets = (bs: readonly (readonly string[])[]) =>
  bs.map((b) => [...b].sort()).sort((a, b) => a.join().localeCompare(b.join()));
const collectiveRows = (r: Raw) => r.nodes.filter((n) => n.kind === 'collective');

describe('2-D graphs from torch import', () => {
  it('the fixtures hold 8 meshes × depths, each with tp all-reduces and both groups', () => {
    expect(GRAPHS).toHaveLength(8);
    for (const g of GRAPHS) {
      const groups = new Set(dumps(g).flatMap((d) => collectiveRows(d).map((n) => n.mesh_dim)));
      expect([...groups].sort()).toEqual(['dp_shard', 'tp']);
    }
  });

  it.each(GRAPHS)('%s: joined and one graph at a time; every collective on its own group and size', (graph) => {
    const [fw, bw] = dumps(graph);
    for (const one of [fw, bw]) expect(imported(one).nodes.length).toBeGreaterThan(0);
    const g = imported([fw, bw]);
    const { dp_shard: dp, tp } = fw.mesh;
    expect(g.meta).toMatchObject({ worldSize: dp * tp, mesh: { dpReplicate: 1, dpShard: dp, tp } });
    const coll = expectCollectiveGroups(g, [fw, bw].flatMap(collectiveRows), tp);
    expect(coll.filter((n) => n.kind === 'all_reduce').length).toBeGreaterThan(0);
    // parameters are what dp_shard gathers, never tp's activations
    for (const n of coll) if (n.params) expect(n.collective?.group).toBe('dp_shard');
    // RoPE's freqs_cis is carried as complex64: 8 bytes an element
    const fc = Object.values(g.tensors).find((t) => t.dtype === 'c64' && t.persistent);
    expect(fc?.bytes).toBe((fc?.shape ?? []).reduce((a, b) => a * b, 8));
    // split has one view output per part, each aliasing its input
    const split = g.nodes.find((n) => n.op === 'aten.split.Tensor');
    expect(split?.kind).toBe('view');
    expect(split?.outputs.length).toBe(fw.nodes.find((n) => n.name === split?.name)?.multi?.length);
    for (const t of split?.outputs ?? []) expect(g.tensors[t].aliasOf).toBe(split?.inputs[0]);
  });

  it("takes a collective's size from its mesh dimension, and refuses one with no group on a sub-group's shapes", () => {
    const [fw] = dumps(GRAPHS[0]);
    const i = fw.nodes.findIndex((n) => n.mesh_dim === 'dp_shard' && n.target.includes('all_gather'));
    const raw = clone(fw);
    delete raw.nodes[i].group_size;
    const node = imported(raw).nodes.find((n) => n.name === fw.nodes[i].name);
    expect(node?.collective).toMatchObject({ group: 'dp_shard', groupSize: 2, groupStride: 2 });
    delete raw.nodes[i].mesh_dim;
    delete raw.nodes[i].group_name;
    const r = importFxGraph(raw);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.where).toBe(`nodes[${i}].shape`);
    expect(r.error.message).toMatch(/on 4 ranks \(dim 0 × group size\)/);
  });

  it('a group size that contradicts the mesh, or a mesh of unknown dimensions, is refused', () => {
    const [fw] = dumps(GRAPHS[0]);
    const i = fw.nodes.findIndex((n) => n.mesh_dim === 'tp');
    const raw = clone(fw);
    raw.nodes[i].group_size = 4;
    const r = importFxGraph(raw);
    expect(!r.ok && r.error.where).toBe(`nodes[${i}].group_size`);
    expect(!r.ok && r.error.message).toMatch(/differs from the mesh's 'tp' size 2/);
    const mesh = { ...clone(fw), mesh: { dp_shard: 2, cp: 2 } };
    const m = importFxGraph(mesh);
    const allowed = /field 'mesh' has dimension 'cp'; allowed: \[dp_replicate, dp_shard, tp\]/;
    expect(!m.ok && m.error.message).toMatch(allowed);
  });
});

describe.each(Object.keys(PROFILES) as (keyof typeof PROFILES)[])("torch's decisions on 2-D graphs (%s)", (profile) => {
  it.each(GRAPHS)("%s: torch's buckets, prefetches, counts, exposure and peaks", (graph) => {
    const want = ['fw', 'bw'].map((p) => EXPECTED[profile][`${graph}_${p}`]);
    const opts = optionsOf(want[0].knobs);
    expect(profileOf({ ...AUTOBUCKETING_PROFILES['torch-2.11'], ...opts })).toBe(PROFILES[profile]);
    const [fw, bw] = dumps(graph);
    const s = runAutobucketing(imported([fw, bw]), cost, opts);
    const stats = s.passStats ?? [];
    expect(stats.map((p) => p.phase)).toEqual(['forward', 'backward']);
    const dpShard = new Set([fw, bw].flatMap((d) => collectiveRows(d).filter((n) => n.mesh_dim === 'dp_shard')));
    const dpNames = new Set([...dpShard].map((n) => n.name));
    stats.forEach((p, k) => {
      const w = want[k];
      expectPhaseStats(p, w);
      // 2.13's FSDP pre-buckets, then the bucketer's own buckets: seed first, in join order
      expect(p.preBucketing?.buckets ?? [], 'pre-buckets').toEqual(w.prebuckets);
      const pre = new Set(w.prebuckets.map((b) => b.join()));
      expect(
        p.buckets.filter((b) => !pre.has(b.join())),
        'buckets in join order',
      ).toEqual(w.bucketsApplied);
      // with 2.11's knobs torch buckets only dp_shard collectives on these graphs (2.13's defaults
      // bucket two tp all-gathers of one backward, and the port with them: the sets above)
      if (profile === 'C') for (const b of p.buckets) for (const c of b) expect(dpNames.has(c), c).toBe(true);
      expect(p.originalPeakBytes).toBe(w.originalPeakBytes);
      expect(p.allowedPeakBytes).toBe(w.allowedPeakBytes);
    });
  });
});

describe("torch's schedule order on 2-D graphs (C: 2.11-like knobs)", () => {
  it.each(GRAPHS)('%s: node for node', (graph) => {
    const want = (phase: string) => EXPECTED.C[`${graph}_${phase === 'forward' ? 'fw' : 'bw'}`];
    expectScheduleOrder(imported(dumps(graph)), cost, AUTOBUCKETING_PROFILES['torch-2.11'], want);
  });
});

describe('fsdp-sim pass on a 2-D graph pair (the gzipped dumps as torch wrote them)', () => {
  it.each([
    ['C', '2.11'],
    ['CA', '2.13'],
  ] as const)("%s: torch's counts (tp all-reduces too), buckets and exposure in --json", async (profile, version) => {
    const graph = 'dp4_tp2_1layer_dev_small_sacop';
    const files = ['fw', 'bw'].map((p) => new URL(`fx/${graph}_${p}.json.gz`, DIR).pathname);
    const run = await cli(['pass', '--fx-graph', ...files, '--torch-profile', version, '--json']);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const r = JSON.parse(run.out);
    const want = ['fw', 'bw'].map((p) => EXPECTED[profile][`${graph}_${p}`]);
    expect(r.collectivesBefore).toBe(want[0].collectivesBefore + want[1].collectivesBefore);
    expect(r.collectivesAfter).toBe(want[0].collectivesAfter + want[1].collectivesAfter);
    expect(r.scheduledExposedMs).toBeCloseTo(want[0].totalExposedMs + want[1].totalExposedMs, 9);
    r.graphs.forEach((g: { buckets: string[][]; overlapping: Record<string, string[]> }, k: number) => {
      expect(sortedSets(g.buckets)).toEqual(sortedSets(want[k].buckets));
      expect(g.overlapping).toEqual(want[k].overlapping);
    });
  });
});
