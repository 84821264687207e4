// The step graph on dp_replicate × dp_shard × tp meshes (torchtitan's Llama plan with sequence
// parallel, FSDP on the local TP shard, HSDP gradient all-reduce) and the mesh config.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, meshOfParallelism, stepConfigOf, validateConfig } from '../../../src/config';
import { ConfigError } from '../../../src/errors';
import {
  buildStepGraph,
  collectivesByGroup,
  paramTensorIds,
  type GraphNode,
  type Mesh,
  type StepGraph,
} from '../../../src/graph';
import { tpPlacement } from '../../../src/graph/fsdp';
import { verifyGraph } from '../../../src/graph/verify';
import { MODEL_PRESETS, paramTable } from '../../../src/model';

const mesh = (dpReplicate: number, dpShard: number, tp: number): Mesh => ({ dpReplicate, dpShard, tp });
const build = (m: Mesh, extra: object = {}) =>
  buildStepGraph({ model: 'small', worldSize: m.dpReplicate * m.dpShard * m.tp, mesh: m, ...extra });
const colls = (g: StepGraph) => g.nodes.filter((n) => n.collective !== undefined && n.kind !== 'wait');
const matmulFlops = (g: StepGraph) => g.nodes.filter((n) => n.matmulLike).reduce((a, n) => a + n.flops, 0);

describe('mesh config (torchtitan parallelism.*)', () => {
  it('resolves -1 as the rest and checks the product against ranks, naming the fields', () => {
    const p = { ...DEFAULT_CONFIG.parallelism };
    expect(meshOfParallelism(64, { ...p, tensor_parallel_degree: 8 })).toEqual(mesh(1, 8, 8));
    expect(meshOfParallelism(64, { ...p, data_parallel_replicate_degree: 2 })).toEqual(mesh(2, 32, 1));
    expect(
      meshOfParallelism(8, {
        ...p,
        data_parallel_shard_degree: 2,
        data_parallel_replicate_degree: 2,
        tensor_parallel_degree: 2,
      }),
    ).toEqual(mesh(2, 2, 2));
    const bad = validateConfig({ ranks: 8, parallelism: { data_parallel_shard_degree: 2, tensor_parallel_degree: 2 } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.field).toBe('parallelism.data_parallel_shard_degree');
      expect(bad.error.message).toMatch(/must equal ranks \(8\), got 2 · 1 · 2 = 4/);
    }
    const rest = validateConfig({ ranks: 6, parallelism: { tensor_parallel_degree: 4 } });
    expect(!rest.ok && rest.error.message).toMatch(/parallelism\.tensor_parallel_degree .* must divide ranks \(6\)/);
    const zero = validateConfig({ ranks: 4, parallelism: { data_parallel_shard_degree: 0 } });
    expect(!zero.ok && zero.error.field).toBe('parallelism.data_parallel_shard_degree');
  });

  it('passes the mesh to the step graph', () => {
    const v = validateConfig({
      model: 'small',
      ranks: 8,
      parallelism: { tensor_parallel_degree: 2, data_parallel_replicate_degree: 2 },
    });
    expect(v.ok && stepConfigOf(v.value).mesh).toEqual(mesh(2, 2, 2));
  });

  it('rejects a TP degree that does not divide the heads, naming mesh.tp and the dim', () => {
    expect(() => buildStepGraph({ model: 'tiny', worldSize: 8, mesh: mesh(1, 1, 8) })).toThrow(ConfigError);
    expect(() => buildStepGraph({ model: 'tiny', worldSize: 8, mesh: mesh(1, 1, 8) })).toThrow(
      /mesh\.tp .* nHeads \(4\)/,
    );
    expect(() => buildStepGraph({ model: 'tiny', worldSize: 4, mesh: mesh(1, 1, 2) })).toThrow(
      /worldSize \(4\), got 1 · 1 · 2 = 2/,
    );
  });
});

describe('step graph on a mesh', () => {
  it('is the 1-D graph, unchanged, on FSDP-only meshes', () => {
    expect(build(mesh(1, 4, 1))).toEqual(buildStepGraph({ model: 'small', worldSize: 4 }));
  });

  it.each([
    ['FSDP 2 × TP 2', mesh(1, 2, 2)],
    ['HSDP 2 × 2', mesh(2, 2, 1)],
    ['HSDP 2 × 2 × TP 2', mesh(2, 2, 2)],
  ])('%s: verifies, every collective on a named group with its size and stride', (_n, m) => {
    for (const ac of ['none', 'selective', 'full'] as const) {
      const g = verifyGraph(build(m, { activationCheckpointing: ac }));
      const expected: Record<string, [number, number]> = {
        dp_shard: [m.dpShard, m.tp],
        tp: [m.tp, 1],
        dp_replicate: [m.dpReplicate, m.dpShard * m.tp],
      };
      for (const n of colls(g)) {
        const c = n.collective!;
        expect(Object.keys(expected)).toContain(c.group);
        expect([c.groupSize, c.groupStride ?? 1], n.name).toEqual(expected[c.group]);
        expect(c.kind).toBe(n.kind);
      }
    }
  });

  it('shards each parameter by its TP placement, then FSDP on dim 0 of the local shard', () => {
    const m = mesh(1, 4, 2);
    const g = build(m);
    const args = MODEL_PRESETS.small;
    for (const p of paramTable(args)) {
      const info = g.params.find((x) => x.name === p.name)!;
      const place = tpPlacement(p.name);
      const local =
        place === 'colwise'
          ? [p.shape[0] / 2, ...p.shape.slice(1)]
          : place === 'rowwise'
            ? [p.shape[0], p.shape[1] / 2]
            : [...p.shape];
      expect(info.localShape ?? p.shape, p.name).toEqual(local);
      const shard = g.tensors[paramTensorIds(p.name).shard];
      expect(shard.shape, p.name).toEqual([Math.ceil(local[0] / 4), ...local.slice(1)]);
    }
    // every weight of the TP plan is split: only the norms are replicated
    expect(
      g.params
        .filter((p) => p.tp === undefined)
        .map((p) => p.name)
        .every((n) => n.endsWith('norm.weight')),
    ).toBe(true);
    expect(tpPlacement('layers.0.attention.wo.weight')).toBe('rowwise');
    expect(tpPlacement('layers.0.feed_forward.w3.weight')).toBe('colwise');
  });

  it('splits the matmul FLOPs and the activations per rank by the TP degree', () => {
    const one = buildStepGraph({ model: 'small', worldSize: 2 });
    const tp2 = build(mesh(1, 2, 2));
    expect(matmulFlops(tp2) * 2).toBeCloseTo(matmulFlops(one), -3);
    const { dim } = MODEL_PRESETS.small;
    const T = MODEL_PRESETS.small.batch * MODEL_PRESETS.small.seqLen;
    // a block's input is a sequence shard; the attention input is all-gathered back to T rows
    expect(tp2.tensors['layers.0.attention.residual'].shape).toEqual([T / 2, dim]);
    expect(tp2.tensors['layers.0.attention_norm.tp_full'].shape).toEqual([T, dim]);
    expect(tp2.tensors.output.shape).toEqual([T, MODEL_PRESETS.small.vocabSize / 2]);
  });

  it('emits the sequence-parallel collectives of each block, mirrored in backward', () => {
    const g = build(mesh(1, 2, 2));
    const L = MODEL_PRESETS.small.nLayers;
    const tpOf = (phase: GraphNode['phase'], kind: GraphNode['kind']) =>
      colls(g).filter((n) => n.collective!.group === 'tp' && n.phase === phase && n.kind === kind).length;
    // forward: per block AG before attention and feed-forward, RS after wo and w2; embedding RS, final norm AG
    expect(tpOf('forward', 'all_gather')).toBe(2 * L + 1);
    expect(tpOf('forward', 'reduce_scatter')).toBe(2 * L + 1);
    // backward: each forward AG becomes an RS and vice versa
    expect(tpOf('backward', 'reduce_scatter')).toBe(2 * L + 1);
    expect(tpOf('backward', 'all_gather')).toBe(2 * L + 1);
    // the replicated norm weights' partial gradients are all-reduced on tp
    expect(tpOf('backward', 'all_reduce')).toBe(2 * L + 1);
    const counts = collectivesByGroup(g.nodes);
    expect(Object.keys(counts)).toEqual(['dp_shard', 'tp']);
    expect(counts.dp_shard.all_reduce).toBe(0);
  });

  it("selective AC under TP keeps wo's reduce-scatter output: wo and its RS are not recomputed", () => {
    const names = (g: StepGraph) => new Set(g.nodes.map((n) => n.name));
    const tp = names(build(mesh(1, 2, 2), { activationCheckpointing: 'selective' }));
    const one = names(buildStepGraph({ model: 'small', worldSize: 4, activationCheckpointing: 'selective' }));
    expect(one.has('layers.0.attention.wo.recompute')).toBe(true); // every second mm is recomputed
    expect(tp.has('layers.0.attention.wo.recompute')).toBe(false);
    expect(tp.has('layers.0.attention.wo.recompute.tp_reduce_scatter')).toBe(false);
    // k is recomputed, so its input is gathered again; full AC recomputes wo and its reduce-scatter
    expect(tp.has('layers.0.attention_norm.recompute.tp_all_gather')).toBe(true);
    const full = names(build(mesh(1, 2, 2), { activationCheckpointing: 'full' }));
    expect(full.has('layers.0.attention.wo.recompute.tp_reduce_scatter')).toBe(true);
  });

  it('HSDP: gradient shards reduce-scattered on dp_shard, then all-reduced (avg) on dp_replicate', () => {
    const g = build(mesh(2, 2, 1));
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    for (const p of g.params) {
      const ar = byName.get(`${p.name}.all_reduce`)!;
      expect(ar.collective).toMatchObject({ group: 'dp_replicate', groupSize: 2, groupStride: 2, reduceOp: 'avg' });
      expect(ar.inputs).toEqual([`${p.name}.grad_shard.partial`]);
      expect(ar.id).toBeGreaterThan(byName.get(`${p.name}.reduce_scatter.wait`)!.id);
      const adam = byName.get(`${p.name}.adamw`)!;
      expect(adam.inputs).toContain(paramTensorIds(p.name).gradShard);
      expect(g.tensors[paramTensorIds(p.name).gradShard].aliasOf).toBe(ar.outputs[0]);
    }
  });

  it('keeps per-rank parameter memory about the same across meshes of one world, and cuts activations with TP', () => {
    const persistent = (g: StepGraph) =>
      Object.values(g.tensors)
        .filter((t) => t.persistent)
        .reduce((a, t) => a + t.bytes, 0);
    const fsdp = buildStepGraph({ model: 'small', worldSize: 8 });
    const tp = build(mesh(1, 4, 2));
    // the norms are replicated across tp: a little more, never less
    expect(persistent(tp)).toBeGreaterThanOrEqual(persistent(fsdp) * 0.99);
    expect(persistent(tp)).toBeLessThan(persistent(fsdp) * 1.05);
    const acts = (g: StepGraph) =>
      Object.values(g.tensors)
        .filter((t) => !t.persistent && t.aliasOf === undefined)
        .reduce((a, t) => a + t.bytes, 0);
    expect(acts(tp)).toBeLessThan(acts(fsdp) * 0.75);
  });
});
