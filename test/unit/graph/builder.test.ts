// Structure of the SimpleFSDP step graph: per-parameter collectives, shards, tensors, FLOPs.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import {
  DTYPE_BYTES,
  LOSS,
  TARGETS,
  TOKENS,
  buildStepGraph,
  paramTensorIds,
  type GraphNode,
  type StepGraph,
} from '../../../src/graph';
import { MATMUL_LIKE_OPS } from '../../../src/graph/ops';
import { verifyGraph } from '../../../src/graph/verify';
import { MODEL_NAMES, MODEL_PRESETS, paramTable } from '../../../src/model';
import { expectedLengths } from '../../../src/runtime/cpu/attrs';

const byParam = (g: StepGraph, kind: GraphNode['kind'], phase: GraphNode['phase'], p: string) =>
  g.nodes.filter((n) => n.kind === kind && n.phase === phase && n.params?.includes(p));
const numel = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

describe('buildStepGraph', () => {
  it.each(MODEL_NAMES.map((m) => [m]))('builds a graph for %s that verifies', (model) => {
    const g = buildStepGraph({ model, worldSize: 8 });
    expect(() => verifyGraph(g)).not.toThrow();
    expect(g.meta).toMatchObject({ model, worldSize: 8, paramDtype: 'bf16', reduceDtype: 'fp32' });
    expect(g.params.length).toBe(paramTable(MODEL_PRESETS[model]).length);
  });

  it('gathers each parameter once in forward and re-gathers it in backward (not tok_embeddings)', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 4 });
    for (const p of g.params) {
      expect(byParam(g, 'all_gather', 'forward', p.name).length, p.name).toBe(1);
      expect(byParam(g, 'all_gather', 'backward', p.name).length, p.name).toBe(
        p.name === 'tok_embeddings.weight' ? 0 : 1,
      );
      expect(byParam(g, 'reduce_scatter', 'backward', p.name).length, p.name).toBe(1);
      const opt = g.nodes.filter((n) => n.op === 'adamw' && n.params?.includes(p.name));
      expect(opt.length).toBe(1);
      expect(opt[0].phase).toBe('optimizer');
      const ids = paramTensorIds(p.name);
      expect(opt[0].inputs).toEqual([ids.shard, ids.gradShard, ids.m, ids.v]);
      expect(opt[0].outputs).toEqual([ids.shardNext, ids.mNext, ids.vNext]);
    }
    const coll = g.nodes.filter((n) => n.collective);
    expect(coll.length).toBe(g.params.length * 3 - 1);
  });

  it('emits cast → all_gather → wait right before the first use, with dtype and group', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 2, paramDtype: 'fp16' });
    for (const ag of g.nodes.filter((n) => n.kind === 'all_gather')) {
      const [cast, wait, use] = [g.nodes[ag.id - 1], g.nodes[ag.id + 1], g.nodes[ag.id + 2]];
      expect(cast.kind).toBe('cast');
      expect(ag.inputs).toEqual(cast.outputs);
      expect(wait.kind).toBe('wait');
      expect(wait.waitOf).toBe(ag.name);
      expect(g.tensors[wait.outputs[0]].aliasOf).toBe(ag.outputs[0]);
      expect(use.inputs).toContain(wait.outputs[0]);
      expect(ag.collective).toMatchObject({ group: 'dp', groupSize: 2, dtype: 'fp16' });
      expect(g.tensors[ag.outputs[0]].dtype).toBe('fp16');
    }
  });

  it("reduce-scatters each gradient after its op's backward (torch's order), averaged in the reduce dtype", () => {
    const g = buildStepGraph({ model: 'small', worldSize: 4, reduceDtype: 'bf16' });
    for (const rs of g.nodes.filter((n) => n.kind === 'reduce_scatter')) {
      const [cast, wait] = [g.nodes[rs.id - 1], g.nodes[rs.id + 1]];
      const fqn = rs.params?.[0] as string;
      expect(cast.kind).toBe('cast');
      expect(cast.inputs[0]).toBe(`${fqn}.grad`);
      const grad = g.nodes.findLast((n) => n.id < cast.id && n.outputs.includes(cast.inputs[0]))!;
      // between dW and its cast only the same weight's dX matmul and that weight's re-gather run
      const between = g.nodes.slice(grad.id + 1, cast.id);
      expect(
        between.every((n) => n.params?.includes(fqn)),
        fqn,
      ).toBe(true);
      expect(between.filter((n) => n.op === 'matmul').length).toBeLessThanOrEqual(1);
      expect(rs.collective).toMatchObject({ reduceOp: 'avg', dtype: 'bf16', groupSize: 4 });
      expect(wait.waitOf).toBe(rs.name);
      expect(wait.outputs).toEqual([paramTensorIds(fqn).gradShard]);
    }
  });

  it('records bytes = numel·dtype for every tensor and marks persistent state', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 8 });
    for (const t of Object.values(g.tensors)) expect(t.bytes, t.id).toBe(numel(t.shape) * DTYPE_BYTES[t.dtype]);
    expect(g.tensors[TOKENS]).toMatchObject({ dtype: 'i32', persistent: true, shape: [4 * 32] });
    expect(g.tensors[TARGETS].dtype).toBe('i32');
    expect(g.tensors[LOSS].shape).toEqual([1]);
    for (const p of g.params) {
      const ids = paramTensorIds(p.name);
      for (const id of [ids.shard, ids.m, ids.v]) expect(g.tensors[id].persistent, id).toBe(true);
      expect(g.tensors[ids.shardNext].persistent).toBeUndefined();
    }
    const persistent = Object.values(g.tensors).filter((t) => t.persistent).length;
    expect(persistent).toBe(2 + 3 * g.params.length);
  });

  it.each([1, 2, 3, 5, 8, 12])('shards cover each parameter on %i ranks (ceil rows, padded last rank)', (n) => {
    const g = buildStepGraph({ model: 'tiny', worldSize: n });
    for (const p of g.params) {
      const rows = p.shape[0];
      expect(p.shardRows * n).toBeGreaterThanOrEqual(rows);
      expect((p.shardRows - 1) * n).toBeLessThan(rows);
      const shard = g.tensors[paramTensorIds(p.name).shard];
      expect(numel(shard.shape) * n).toBeGreaterThanOrEqual(p.numel);
      const ag = g.nodes.find((x) => x.kind === 'all_gather' && x.params?.[0] === p.name) as GraphNode;
      expect(ag.collective?.outputBytes).toBe((ag.collective?.inputBytes ?? 0) * n);
      const gradCast = g.nodes.find((x) => x.name === `${p.name}.grad.cast`) as GraphNode;
      const pad = p.shardRows * n - rows;
      expect(gradCast.attrs?.padRows).toBe(pad > 0 ? pad : undefined);
      expect(g.tensors[gradCast.outputs[0]].shape[0]).toBe(p.shardRows * n);
    }
  });

  it('never pads tiny or small on 1, 2, 4 or 8 ranks', () => {
    for (const model of ['tiny', 'small'] as const) {
      for (const n of [1, 2, 4, 8]) {
        const g = buildStepGraph({ model, worldSize: n });
        expect(g.nodes.some((x) => x.attrs?.padRows !== undefined)).toBe(false);
      }
    }
  });

  it('gives every compute node attrs whose tensor lengths the runtime accepts', () => {
    const g = buildStepGraph({ model: 'tiny', worldSize: 3 });
    const elems = (id: string) => numel(g.tensors[id].shape);
    for (const n of g.nodes.filter((x) => x.kind === 'compute')) {
      const want = expectedLengths(n.op as never, n.attrs ?? {});
      expect(want.inputs.length, n.name).toBe(n.inputs.length);
      expect(want.outputs.length, n.name).toBe(n.outputs.length);
      // gathered weights may be padded (longer); activations match exactly
      n.inputs.forEach((id, k) => expect(elems(id), `${n.name} in ${k}`).toBeGreaterThanOrEqual(want.inputs[k]));
      n.outputs.forEach((id, k) => expect(elems(id), `${n.name} out ${k}`).toBe(want.outputs[k]));
    }
  });

  it('marks exactly the matmul and attention nodes matmul-like, with 2·M·N·K FLOPs from shapes', () => {
    const g = buildStepGraph({ model: 'small', worldSize: 4 });
    for (const n of g.nodes) {
      expect(n.matmulLike, n.name).toBe(n.kind === 'compute' && MATMUL_LIKE_OPS.has(n.op));
      if (n.op !== 'matmul') continue;
      const [a, c] = [g.tensors[n.inputs[0]].shape, g.tensors[n.outputs[0]].shape];
      const K = n.attrs?.transA ? a[0] : a[1];
      expect(n.flops, n.name).toBe(2 * c[0] * c[1] * K);
    }
  });

  it('totals 6·T·(linear params) matmul FLOPs per step plus causal attention (bwd 2.5×)', () => {
    const a = MODEL_PRESETS['llama3-8b'];
    const g = buildStepGraph({ model: 'llama3-8b', worldSize: 8, batch: 2, seqLen: 4096 });
    const T = 2 * 4096;
    const linear = paramTable(a).filter((p) => p.shape.length === 2 && p.name !== 'tok_embeddings.weight');
    const mm = g.nodes.filter((n) => n.op === 'matmul').reduce((s, n) => s + n.flops, 0);
    expect(mm).toBe(6 * T * linear.reduce((s, p) => s + p.numel, 0));
    const attnFwd = (4 * 2 * a.nHeads * 4096 * 4096 * (a.dim / a.nHeads)) / 2;
    const attn = g.nodes
      .filter((n) => n.op === 'attention' || n.op === 'attention_bwd')
      .reduce((s, n) => s + n.flops, 0);
    expect(attn).toBeCloseTo(a.nLayers * attnFwd * 3.5, -3);
  });

  it('is deterministic', () => {
    const cfg = { model: 'small', worldSize: 4 } as const;
    expect(JSON.stringify(buildStepGraph(cfg))).toBe(JSON.stringify(buildStepGraph(cfg)));
  });

  it('accepts explicit ModelArgs', () => {
    const g = buildStepGraph({ model: { ...MODEL_PRESETS.tiny, nKvHeads: 2, nLayers: 1 }, worldSize: 2 });
    expect(verifyGraph(g).meta.model).toBe('custom');
    expect(g.tensors['layers.0.attention.wk'].shape).toEqual([128, 32]);
  });

  it.each([
    [{ model: 'gpt2', worldSize: 2 }, 'model'],
    [{ model: 'tiny', worldSize: 0 }, 'worldSize'],
    [{ model: 'tiny', worldSize: 2.5 }, 'worldSize'],
    [{ model: 'tiny', worldSize: 2, batch: 0 }, 'batch'],
    [{ model: 'tiny', worldSize: 2, seqLen: -1 }, 'seqLen'],
    [{ model: 'tiny', worldSize: 2, paramDtype: 'int8' }, 'paramDtype'],
    [{ model: 'tiny', worldSize: 2, reduceDtype: 'i32' }, 'reduceDtype'],
    [{ model: 'tiny', worldSize: 2, lr: -1 }, 'lr'],
    [{ model: 'tiny', worldSize: 2, beta1: 1 }, 'beta1'],
    [{ model: 'tiny', worldSize: 2, beta2: NaN }, 'beta2'],
    [{ model: 'tiny', worldSize: 2, eps: 0 }, 'eps'],
    [{ model: 'tiny', worldSize: 2, weightDecay: -0.1 }, 'weightDecay'],
    [{ model: 'tiny', worldSize: 2, lrr: 1 }, 'lrr'],
    [{ model: { ...MODEL_PRESETS.tiny, dim: 63 }, worldSize: 2 }, 'model.nHeads'],
    [{ model: { ...MODEL_PRESETS.tiny, nLayers: 5000 }, worldSize: 2 }, 'model.nLayers'],
    [{ model: 'tiny', worldSize: 2, batch: 1 << 20, seqLen: 1 << 20 }, 'seqLen'],
  ])('rejects an invalid config (%#) with a ConfigError naming the field', (cfg, field) => {
    try {
      buildStepGraph(cfg as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe(field);
    }
  });
});
