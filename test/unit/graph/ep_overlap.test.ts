// graph_trainer's EP overlap (--compile.ep_overlap.*; torchtitan b5bcd76 ep_chunk_pass.py,
// ep_overlap_pass.py): the chunked graph keeps the step's FLOPs and token all-to-all bytes, shares
// the weights' FSDP collectives, verifies, orders its token exchanges as the pass's contract says,
// and hides the all-to-alls behind the other chunk's compute in the simulated step; the combinations
// torchtitan refuses are refused by field.
import { describe, expect, it } from 'vitest';
import { epOverlapGraph } from '../../../src/backends';
import { fsdpDenseRegionOverlapOn, validateConfig, type SimConfig } from '../../../src/config';
import type { EpChunkOptions, GraphNode, StepGraph } from '../../../src/graph';
import { verifyGraph } from '../../../src/graph/verify';
import { MODEL_PRESETS } from '../../../src/model';
import { buildGraph, runPipeline } from '../../../src/pipeline';
import { exposedCommByGroup } from '../../../src/sim/group_exposure';

function config(over: Record<string, unknown>): SimConfig {
  const r = validateConfig({
    model: 'dsv3-debug',
    ranks: 8,
    compileMode: 'aot_fx_trace',
    memoryPolicy: 'full',
    ...over,
  });
  if (!r.ok) throw r.error;
  return r.value;
}

const ep2 = (over: Record<string, unknown> = {}) => config({ parallelism: { expert_parallel_degree: 2 }, ...over });
const sum = (nodes: readonly GraphNode[], f: (n: GraphNode) => number) => nodes.reduce((s, n) => s + f(n), 0);
const isTokenA2a = (n: GraphNode) => n.kind === 'all_to_all' && !n.name.includes('.counts.');
const fsdpNames = (g: StepGraph) =>
  g.nodes
    .filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter')
    .map((n) => n.name)
    .sort();

const OPTIONS: readonly EpChunkOptions[] = [
  { chunkDim: 'batch', moduleFqn: 'layers.*' },
  { chunkDim: 'batch', moduleFqn: 'layers.*.moe' },
  { chunkDim: 'seq', moduleFqn: 'layers.*.moe' },
];

describe('EP chunking', () => {
  const moe = MODEL_PRESETS['dsv3-debug'].moe;
  if (moe === undefined) throw new Error('dsv3-debug is an MoE model');
  const moeLayers = MODEL_PRESETS['dsv3-debug'].nLayers - moe.nDenseLayers;

  for (const policy of ['full', 'none'] as const) {
    for (const opts of OPTIONS) {
      const what = `${opts.chunkDim}, ${opts.moduleFqn}, ${policy}`;
      it(`keeps FLOPs, token all-to-all bytes and FSDP collectives (${what})`, () => {
        const g = buildGraph(ep2({ memoryPolicy: policy }));
        const c = verifyGraph(epOverlapGraph(g, opts));
        // the partial gradients' adds are the only new FLOPs: one per element of each chunked parameter
        const adds = c.nodes.filter((n) => n.name.endsWith('.chunk_add'));
        expect(sum(adds, (n) => n.flops)).toBe(sum(adds, (n) => c.tensors[n.outputs[0]].shape.reduce((p, d) => p * d)));
        expect(sum(c.nodes, (n) => n.flops) - sum(adds, (n) => n.flops)).toBeCloseTo(
          sum(g.nodes, (n) => n.flops),
          0,
        );
        const bytes = (gr: StepGraph) => sum(gr.nodes.filter(isTokenA2a), (n) => n.collective?.inputBytes ?? 0);
        expect(bytes(c)).toBe(bytes(g));
        expect(c.nodes.filter((n) => n.kind === 'all_to_all').length).toBe(
          2 * g.nodes.filter((n) => n.kind === 'all_to_all').length,
        );
        expect(fsdpNames(c)).toEqual(fsdpNames(g));
        // one add per parameter of each chunked module: the MoE's router, 3 expert and 3 shared-expert
        // weights; a whole block adds its 2 norms and MLA's wq, wkv_a, kv_norm, wkv_b, wo
        expect(adds.length).toBe((opts.moduleFqn === 'layers.*.moe' ? 7 : 7 + 7) * moeLayers);
      });
    }
  }

  it('halves the token extents of a chunked kernel and leaves the weights whole', () => {
    const g = buildGraph(ep2());
    const c = epOverlapGraph(g, { chunkDim: 'batch', moduleFqn: 'layers.*' });
    const byName = new Map(c.nodes.map((n) => [n.name, n]));
    const w1 = g.nodes.find((n) => n.name === 'layers.1.moe.experts.w1');
    const sdpa = g.nodes.find((n) => n.name === 'layers.1.attention.sdpa');
    for (const k of [0, 1]) {
      expect(byName.get(`layers.1.moe.experts.w1.chunk${k}`)?.attrs?.M).toBe(Number(w1?.attrs?.M) / 2);
      expect(byName.get(`layers.1.attention.sdpa.chunk${k}`)?.attrs?.batch).toBe(Number(sdpa?.attrs?.batch) / 2);
      expect(byName.get(`layers.1.moe.experts.w1.chunk${k}`)?.inputs[1]).toBe(w1?.inputs[1]);
    }
  });

  it('splits a live-in by a view along the batch and by two copies along the sequence', () => {
    const g = buildGraph(ep2());
    const x = g.tensors['layers.1.ffn_norm'];
    const batch = epOverlapGraph(g, { chunkDim: 'batch', moduleFqn: 'layers.*.moe' });
    const view = batch.nodes.find((n) => n.name === 'layers.1.ffn_norm.split');
    expect(view?.kind).toBe('view');
    expect(view?.outputs.map((t) => batch.tensors[t].aliasOf)).toEqual([x.id, x.id]);
    const seq = epOverlapGraph(g, { chunkDim: 'seq', moduleFqn: 'layers.*.moe' });
    const copies = seq.nodes.filter((n) => n.name.startsWith('layers.1.ffn_norm.split'));
    expect(copies.map((n) => [n.op, n.bytesMoved])).toEqual([
      ['copy', x.bytes],
      ['copy', x.bytes],
    ]);
  });

  it('is deterministic: two builds of one config chunk to the same graph', () => {
    const opts = { chunkDim: 'batch', moduleFqn: 'layers.*' } as const;
    expect(epOverlapGraph(buildGraph(ep2()), opts)).toEqual(epOverlapGraph(buildGraph(ep2()), opts));
  });
});

/** Token exchanges of each region and phase, in graph order: chunk and label. */
function markersByRegion(g: StepGraph): Map<string, { chunk: number; label: string; at: number; wait: number }[]> {
  const waitAt = new Map(g.nodes.filter((n) => n.kind === 'wait').map((n) => [n.waitOf, n.id]));
  const out = new Map<string, { chunk: number; label: string; at: number; wait: number }[]>();
  for (const n of g.nodes) {
    if (n.attrs?.epTokenExchange === undefined) continue;
    const key = `${n.attrs.chunkRegion} ${n.phase}`;
    const m = {
      chunk: Number(n.attrs.chunk),
      label: String(n.attrs.epTokenExchange),
      at: n.id,
      wait: waitAt.get(n.name) ?? -1,
    };
    out.set(key, [...(out.get(key) ?? []), m]);
  }
  return out;
}

describe('EP overlap schedule', () => {
  for (const opts of OPTIONS) {
    const what = `${opts.moduleFqn}, ${opts.chunkDim}`;
    it(`launches marker pairs 0, 1 forward and 1, 0 backward, each wait after the peer launch (${what})`, () => {
      const c = epOverlapGraph(buildGraph(ep2()), opts);
      const regions = markersByRegion(c);
      expect(regions.size).toBe(2 * 5); // 5 MoE blocks, forward and backward
      for (const [key, markers] of regions) {
        const first = key.endsWith('backward') ? 1 : 0;
        expect(markers.length % 2).toBe(0);
        for (let i = 0; i < markers.length; i += 2) {
          const [a, b] = [markers[i], markers[i + 1]];
          expect([a.chunk, b.chunk]).toEqual([first, 1 - first]);
          expect(a.label).toBe(b.label);
          expect(a.wait).toBeGreaterThan(b.at); // the first chunk's exchange is in flight while the second launches
        }
      }
    });
  }

  it('runs filler compute between the first marker pair and the next (shared experts under the dispatch)', () => {
    const c = epOverlapGraph(buildGraph(ep2()), { chunkDim: 'batch', moduleFqn: 'layers.*.moe' });
    const fwd = markersByRegion(c).get('layers.1.moe forward') ?? [];
    const between = c.nodes.slice(fwd[1].at + 1, fwd[2].at);
    const shared = between.filter((n) => n.name.includes('.shared_experts.') && n.matmulLike);
    expect(shared.map((n) => n.attrs?.chunk).sort()).toEqual([0, 0, 0, 1, 1, 1]);
    // MoE roots pair the first exchange: both chunks' counts exchanges precede the first dispatch
    const counts = c.nodes.filter((n) => n.name.startsWith('layers.1.moe.dispatch.counts.all_to_all.chunk'));
    expect(counts.every((n) => n.id < fwd[0].at)).toBe(true);
  });
});

function epRun(cfg: SimConfig, backend: 'transformer_block' | 'aot_eager') {
  const r = runPipeline(cfg, backend);
  const compute = r.sim.events.filter((e) => e.rank === 0 && e.kind === 'compute');
  const exposed = exposedCommByGroup(0, r.sim.events);
  return {
    stepUs: r.sim.stepUs,
    ep: exposed.ep ?? 0,
    fsdp: (exposed.dp ?? 0) + (exposed.efsdp ?? 0),
    flops: sum(r.graph.nodes, (n) => (n.name.endsWith('.chunk_add') ? 0 : n.flops)),
    computeUs: compute.reduce((s, e) => s + e.dur, 0),
  };
}

describe('EP overlap in the simulated step', () => {
  const cases = [
    { model: 'dsv3-debug', ep: 2, backend: 'transformer_block' },
    { model: 'dsv3-debug', ep: 2, backend: 'aot_eager' },
    { model: 'dsv3-16b', ep: 4, backend: 'transformer_block' },
  ] as const;
  for (const { model, ep, backend } of cases) {
    it(`hides most of the exposed ep time, the same FLOPs (${model}, ep ${ep}, ${backend})`, () => {
      const base = { model, parallelism: { expert_parallel_degree: ep } };
      const off = epRun(config(base), backend);
      const on = epRun(config({ ...base, epOverlap: { enabled: true } }), backend);
      expect(on.ep).toBeLessThan(off.ep / 2);
      expect(on.flops).toBeCloseTo(off.flops, -3);
      // half-size kernels, the cats and adds and more compute under collectives: a few % more kernel time
      expect(on.computeUs).toBeGreaterThan(off.computeUs);
      expect(on.computeUs).toBeLessThan(off.computeUs * 1.05);
      expect(on.stepUs).toBeLessThan(off.stepUs * 1.005);
      // the weights' all-gathers still wait where the body first reads them: FSDP stays as hidden
      expect(on.fsdp).toBeLessThan(off.fsdp * 1.05);
    });
  }

  it('drops the dense-region FSDP pass unless graph chunking roots at layers.*.moe, as passes.py does', () => {
    const dense = (epOverlap: Record<string, unknown>) =>
      fsdpDenseRegionOverlapOn(ep2({ fsdpDenseRegionOverlap: true, epOverlap }), 'transformer_block');
    expect(dense({ enabled: false })).toBe(true);
    expect(dense({ enabled: true, moduleFqn: 'layers.*' })).toBe(false);
    expect(dense({ enabled: true, moduleFqn: 'layers.*.moe', strategy: 'eager' })).toBe(false);
    expect(dense({ enabled: true, moduleFqn: 'layers.*.moe', strategy: 'graph' })).toBe(true);
  });

  it('leaves backends graph_trainer does not trace as they were', () => {
    const cfg = ep2({ epOverlap: { enabled: true } });
    const r = runPipeline(cfg, 'aot_eager_autobucketing');
    expect(r.graph.nodes.some((n) => n.attrs?.chunk !== undefined)).toBe(false);
  });
});

describe('EP overlap refusals', () => {
  const refused = (over: Record<string, unknown>) => {
    const r = validateConfig({ model: 'dsv3-debug', ranks: 8, compileMode: 'aot_fx_trace', ...over });
    if (r.ok) throw new Error(`accepted ${JSON.stringify(over)}`);
    return r.error;
  };
  const on = { enabled: true };
  it.each([
    [
      { compileMode: 'jit', parallelism: { expert_parallel_degree: 2 }, epOverlap: on },
      'epOverlap.enabled',
      "compileMode 'aot_fx_trace'",
    ],
    [{ epOverlap: on }, 'epOverlap.enabled', 'parallelism.expert_parallel_degree > 1'],
    [
      { parallelism: { expert_parallel_degree: 2 }, epOverlap: { ...on, chunkDim: 'seq' } },
      'epOverlap.chunkDim',
      "'layers.*.moe'",
    ],
    [
      { parallelism: { expert_parallel_degree: 2, tensor_parallel_degree: 2 }, epOverlap: on },
      'epOverlap.enabled',
      'parallelism.tensor_parallel_degree 1',
    ],
    [
      { parallelism: { expert_parallel_degree: 2 }, memoryPolicy: 'sac_and_offload', epOverlap: on },
      'epOverlap.enabled',
      "memoryPolicy 'default', 'full'",
    ],
    [{ epOverlap: { moduleFqn: 'layers.*.attention' } }, 'epOverlap.moduleFqn', '[layers.*, layers.*.moe]'],
    [{ epOverlap: { chunkDim: 'tokens' } }, 'epOverlap.chunkDim', '[batch, seq]'],
  ])('refuses %j by its field', (over, field, allowed) => {
    const e = refused(over);
    expect(e.field).toBe(field);
    expect(e.message).toContain(field);
    expect(e.message).toContain(allowed);
  });

  it('refuses an odd extent along the chunked dim, naming it', () => {
    const odd = (over: Record<string, unknown>, dim: 'batch' | 'seq') => () =>
      runPipeline(
        ep2({ ...over, epOverlap: { enabled: true, chunkDim: dim, moduleFqn: 'layers.*.moe' } }),
        'aot_eager',
      );
    expect(odd({ localBatch: 3 }, 'batch')).toThrow(/localBatch must be even/);
    expect(odd({ seqLen: 511 }, 'seq')).toThrow(/seqLen must be even/);
    expect(odd({ localBatch: 3 }, 'seq')).not.toThrow();
  });
});
