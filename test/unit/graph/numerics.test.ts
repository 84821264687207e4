// The step graph is a correct program: executed op by op with the runtime's CPU reference
// kernels on N simulated ranks, its reduce-scattered gradients match finite differences of its
// own loss, N-rank gradients are the average of per-rank gradients (padding included), and a
// few AdamW steps lower the loss.
import { describe, expect, it } from 'vitest';
import { LOSS, TARGETS, TOKENS, buildStepGraph, paramTensorIds, type StepGraph } from '../../../src/graph';
import { verifyGraph } from '../../../src/graph/verify';
import type { ModelArgs } from '../../../src/model';
import { runCpuOp, type CpuTensor } from '../../../src/runtime/cpu/cpu_kernels';
import { rng } from '../../helpers/rng';

type Arr = Float32Array | Int32Array;
type Store = Map<string, Arr>;

const ARGS: ModelArgs = {
  dim: 16,
  nLayers: 2,
  nHeads: 2,
  nKvHeads: 1,
  vocabSize: 32,
  ffnDim: 24,
  normEps: 1e-5,
  seqLen: 8,
  batch: 2,
};

const numel = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);
const alloc = (g: StepGraph, id: string): Arr =>
  g.tensors[id].dtype === 'i32'
    ? new Int32Array(numel(g.tensors[id].shape))
    : new Float32Array(numel(g.tensors[id].shape));
const tensor = (id: string, data: Arr): CpuTensor => ({
  id,
  length: data.length,
  type: data instanceof Int32Array ? 'i32' : 'f32',
  data,
});

/** Full (unsharded) parameters, seeded: norms ≈ 1, matrices ≈ N(0, 0.3²)-ish uniform. */
function initParams(g: StepGraph, seed: number): Map<string, Float32Array> {
  const r = rng(seed);
  const out = new Map<string, Float32Array>();
  for (const p of g.params) {
    const a = new Float32Array(p.numel);
    for (let i = 0; i < a.length; i++) a[i] = p.shape.length === 1 ? 1 + 0.2 * (r() - 0.5) : 0.6 * (r() - 0.5);
    out.set(p.name, a);
  }
  return out;
}

/** Rank r's stores holding its (padded) shards, zero optimizer state and its batch. */
function makeRanks(g: StepGraph, full: Map<string, Float32Array>, batches: Int32Array[][]): Store[] {
  const n = g.meta.worldSize;
  return Array.from({ length: n }, (_, r) => {
    const st: Store = new Map();
    for (const p of g.params) {
      const ids = paramTensorIds(p.name);
      const shard = alloc(g, ids.shard) as Float32Array;
      const rowLen = p.numel / p.shape[0];
      const src = full.get(p.name) as Float32Array;
      const start = r * p.shardRows * rowLen;
      shard.set(src.subarray(Math.min(start, src.length), Math.min(start + shard.length, src.length)));
      st.set(ids.shard, shard);
      st.set(ids.m, alloc(g, ids.m));
      st.set(ids.v, alloc(g, ids.v));
    }
    st.set(TOKENS, batches[r][0]);
    st.set(TARGETS, batches[r][1]);
    return st;
  });
}

/** Runs nodes [0, stop) on all ranks in lock-step; collectives move data between the stores. */
function run(g: StepGraph, ranks: Store[], stop = g.nodes.length, step = 1): void {
  const n = ranks.length;
  for (const node of g.nodes.slice(0, stop)) {
    if (node.kind === 'all_gather') {
      const parts = ranks.map((st) => st.get(node.inputs[0]) as Float32Array);
      const out = new Float32Array(parts[0].length * n);
      parts.forEach((p, r) => out.set(p, r * p.length));
      for (const st of ranks) st.set(node.outputs[0], out.slice());
      continue;
    }
    if (node.kind === 'reduce_scatter') {
      const ins = ranks.map((st) => st.get(node.inputs[0]) as Float32Array);
      const len = ins[0].length / n;
      ranks.forEach((st, r) => {
        const out = new Float32Array(len);
        for (let i = 0; i < len; i++) {
          let s = 0;
          for (const x of ins) s += x[r * len + i];
          out[i] = s / n; // reduceOp avg
        }
        st.set(node.outputs[0], out);
      });
      continue;
    }
    for (const st of ranks) {
      if (node.kind === 'wait' || node.kind === 'view') {
        st.set(node.outputs[0], st.get(node.inputs[0]) as Arr);
      } else if (node.kind === 'cast') {
        const out = alloc(g, node.outputs[0]); // fp32 → fp32; padRows appends zero rows
        out.set((st.get(node.inputs[0]) as Arr).subarray(0, out.length) as never);
        st.set(node.outputs[0], out);
      } else {
        const ins = node.inputs.map((id) => tensor(id, st.get(id) as Arr));
        const outs = node.outputs.map((id) => tensor(id, alloc(g, id)));
        runCpuOp(node.op as never, node.attrs ?? {}, ins, outs, step);
        outs.forEach((t) => st.set(t.id, t.data));
      }
    }
  }
}

function batch(seed: number): Int32Array[] {
  const r = rng(seed);
  const T = ARGS.batch * ARGS.seqLen;
  const tok = Int32Array.from({ length: T }, () => Math.floor(r() * ARGS.vocabSize));
  const tgt = Int32Array.from({ length: T }, () => Math.floor(r() * ARGS.vocabSize));
  return [tok, tgt];
}

const build = (worldSize: number) =>
  verifyGraph(
    buildStepGraph({ model: ARGS, worldSize, paramDtype: 'fp32', reduceDtype: 'fp32', lr: 1e-2, weightDecay: 0 }),
  );

/** The full gradient of each parameter, re-assembled from the ranks' reduce-scattered shards. */
function gatherGrads(g: StepGraph, ranks: Store[]): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const p of g.params) {
    const parts = ranks.map((st) => st.get(paramTensorIds(p.name).gradShard) as Float32Array);
    const all = new Float32Array(parts.reduce((s, x) => s + x.length, 0));
    parts.forEach((x, r) => all.set(x, r * x.length));
    out.set(p.name, all.slice(0, p.numel));
  }
  return out;
}

describe('buildStepGraph numerics (CPU reference kernels)', () => {
  it('produces gradients equal to finite differences of its loss (1 rank)', () => {
    const g = build(1);
    const full = initParams(g, 1);
    const data = [batch(7)];
    const ranks = makeRanks(g, full, data);
    run(g, ranks);
    const grads = gatherGrads(g, ranks);
    const lossAt = g.nodes.findIndex((x) => x.outputs.includes(LOSS)) + 1;
    const loss = (params: Map<string, Float32Array>) => {
      const st = makeRanks(g, params, data);
      run(g, st, lossAt);
      return (st[0].get(LOSS) as Float32Array)[0];
    };
    const r = rng(3);
    const h = 1e-2;
    let checked = 0;
    for (const p of g.params) {
      for (let k = 0; k < 3; k++) {
        const i = Math.floor(r() * p.numel);
        const plus = new Map(full);
        const minus = new Map(full);
        plus.set(p.name, Float32Array.from(full.get(p.name) as Float32Array));
        minus.set(p.name, Float32Array.from(full.get(p.name) as Float32Array));
        (plus.get(p.name) as Float32Array)[i] += h;
        (minus.get(p.name) as Float32Array)[i] -= h;
        const fd = (loss(plus) - loss(minus)) / (2 * h);
        const got = (grads.get(p.name) as Float32Array)[i];
        expect(Math.abs(got - fd), `${p.name}[${i}] graph ${got} vs fd ${fd}`).toBeLessThan(2e-3 + 0.05 * Math.abs(fd));
        checked++;
      }
    }
    expect(checked).toBe(3 * g.params.length);
  });

  it.each([2, 3])('averages per-rank gradients across %i ranks, padded shards included', (n) => {
    const g1 = build(1);
    const gn = build(n);
    const full = initParams(g1, 11);
    const data = Array.from({ length: n }, (_, r) => batch(100 + r));
    const mean = new Map<string, Float32Array>();
    for (let r = 0; r < n; r++) {
      const st = makeRanks(g1, full, [data[r]]);
      run(g1, st);
      for (const [k, v] of gatherGrads(g1, st)) {
        const acc = mean.get(k) ?? new Float32Array(v.length);
        for (let i = 0; i < v.length; i++) acc[i] += v[i] / n;
        mean.set(k, acc);
      }
    }
    const ranks = makeRanks(gn, full, data);
    run(gn, ranks);
    for (const [k, v] of gatherGrads(gn, ranks)) {
      const want = mean.get(k) as Float32Array;
      for (let i = 0; i < v.length; i++)
        expect(Math.abs(v[i] - want[i]), `${k}[${i}]`).toBeLessThan(1e-5 + 1e-4 * Math.abs(want[i]));
    }
    if (n === 3) expect(gn.nodes.some((x) => x.attrs?.padRows !== undefined)).toBe(true);
  });

  it('lowers the loss over AdamW steps on a fixed batch (2 ranks)', () => {
    const g = build(2);
    const full = initParams(g, 5);
    const data = [batch(21), batch(22)];
    let ranks = makeRanks(g, full, data);
    const losses: number[] = [];
    for (let step = 1; step <= 15; step++) {
      run(g, ranks, g.nodes.length, step);
      losses.push(ranks.reduce((s, st) => s + (st.get(LOSS) as Float32Array)[0], 0) / 2);
      ranks = ranks.map((st) => {
        const next: Store = new Map([
          [TOKENS, st.get(TOKENS) as Arr],
          [TARGETS, st.get(TARGETS) as Arr],
        ]);
        for (const p of g.params) {
          const ids = paramTensorIds(p.name);
          next.set(ids.shard, st.get(ids.shardNext) as Arr);
          next.set(ids.m, st.get(ids.mNext) as Arr);
          next.set(ids.v, st.get(ids.vNext) as Arr);
        }
        return next;
      });
    }
    expect(losses[0]).toBeGreaterThan(Math.log(ARGS.vocabSize) * 0.5);
    expect(losses[14]).toBeLessThan(losses[0] * 0.7);
  });

  it.each(['full', 'selective'] as const)(
    'gives bit-identical loss and gradients with %s activation checkpointing (2 ranks, padded)',
    (mode) => {
      const mk = (ac: 'none' | 'full' | 'selective') =>
        verifyGraph(
          buildStepGraph({
            model: { ...ARGS, vocabSize: 33 },
            worldSize: 2,
            paramDtype: 'fp32',
            reduceDtype: 'fp32',
            activationCheckpointing: ac,
          }),
        );
      const g0 = mk('none');
      const g1 = mk(mode);
      expect(g1.nodes.length).toBeGreaterThan(g0.nodes.length);
      const full = initParams(g0, 17);
      const data = [batch(31), batch(32)];
      const r0 = makeRanks(g0, full, data);
      const r1 = makeRanks(g1, full, data);
      run(g0, r0);
      run(g1, r1);
      for (let r = 0; r < 2; r++) expect(r1[r].get(LOSS)).toEqual(r0[r].get(LOSS));
      const a = gatherGrads(g0, r0);
      const b = gatherGrads(g1, r1);
      for (const [k, v] of a) expect(b.get(k), k).toEqual(v);
    },
  );
});
