// Full activation checkpointing in the step graph: structure (re-gathers before the recompute,
// recompute marked, gradient ops read only recomputed activations), liveness (forward keeps only
// the block inputs), memory peak and FLOPs on the llama3 presets, and every backend's schedule
// invariants plus the simulator's on the AC graph.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph, resolveStepConfig, type StepGraph } from '../../../src/graph';
import { RECOMPUTE_SUFFIX, blockWeights, isRecomputeNode } from '../../../src/graph/checkpoint';
import { verifyGraph } from '../../../src/graph/verify';
import { MODEL_PRESETS } from '../../../src/model';
import { simulate } from '../../../src/sim';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { expectCollectivesAligned, expectNoOverlapPerStream, expectWaitsAfterCollectives } from '../sim/invariants';
import { DEFAULT_CAP_BYTES, expectValidSchedule } from '../backends/helpers';

const tiny = (ac: 'none' | 'selective' | 'full', n = 2) =>
  verifyGraph(buildStepGraph({ model: 'tiny', worldSize: n, activationCheckpointing: ac }));
const sumFlops = (g: StepGraph, pred: (i: number) => boolean = () => true) =>
  g.nodes.reduce((s, x, i) => s + (pred(i) ? x.flops : 0), 0);

describe('resolveStepConfig activationCheckpointing', () => {
  it('defaults to none and rejects an unknown mode naming the valid set', () => {
    expect(resolveStepConfig({ model: 'tiny', worldSize: 2 }).activationCheckpointing).toBe('none');
    expect(() => resolveStepConfig({ model: 'tiny', worldSize: 2, activationCheckpointing: 'sac' })).toThrow(
      /activationCheckpointing must be one of \[none, selective, full\], got "sac"/,
    );
  });
});

describe('buildStepGraph with activationCheckpointing full', () => {
  const none = tiny('none');
  const full = tiny('full');
  const nLayers = MODEL_PRESETS.tiny.nLayers;

  it('leaves the graph unchanged with none', () => {
    expect(buildStepGraph({ model: 'tiny', worldSize: 2 })).toEqual(none);
  });

  it('keeps the forward and the optimizer identical and adds only recompute nodes', () => {
    const fwd = (g: StepGraph) =>
      g.nodes.filter((x) => x.phase !== 'backward').map((x) => [x.name, x.inputs, x.outputs]);
    expect(fwd(full)).toEqual(fwd(none));
    const fullNames = new Set(full.nodes.map((x) => x.name));
    for (const x of none.nodes) expect(fullNames.has(x.name), x.name).toBe(true);
    const added = full.nodes.filter((x) => !none.nodes.some((y) => y.name === x.name));
    expect(added.length).toBeGreaterThan(0);
    for (const x of added) {
      expect(isRecomputeNode(x), x.name).toBe(true);
      expect(x.name.endsWith(RECOMPUTE_SUFFIX)).toBe(true);
      expect(x.phase).toBe('backward');
      expect(x.kind).toBe('compute');
    }
  });

  it('re-gathers every weight of a block before its first recompute node, and none again after', () => {
    for (let i = 0; i < nLayers; i++) {
      const idx = (pred: (n: StepGraph['nodes'][number]) => boolean) =>
        full.nodes.flatMap((x, k) => (pred(x) ? [k] : []));
      const firstRecompute = Math.min(...idx((x) => isRecomputeNode(x) && x.layer === i));
      const lastRecompute = Math.max(...idx((x) => isRecomputeNode(x) && x.layer === i));
      for (const fqn of blockWeights(i)) {
        const waits = idx((x) => x.kind === 'wait' && x.phase === 'backward' && x.name === `${fqn}.bwd.wait`);
        expect(waits, fqn).toHaveLength(1);
        expect(waits[0]).toBeLessThan(firstRecompute);
        // the recompute and the gradient ops read the same gathered tensor
        const readers = idx((x) => x.inputs.includes(`${fqn}.bwd.full`));
        expect(readers.length).toBeGreaterThanOrEqual(fqn.endsWith('w2.weight') ? 1 : 2);
        expect(readers.some((k) => k > lastRecompute)).toBe(true);
      }
    }
  });

  it('reads no forward activation of a block in backward except its input', () => {
    const blockInputs = new Set<string>();
    const fwdOutputs = new Map<string, number | undefined>();
    for (const x of full.nodes) {
      if (x.phase !== 'forward') continue;
      for (const o of x.outputs) fwdOutputs.set(o, x.layer);
    }
    // a block's input is the output of the node before its first compute: embeddings or the previous residual
    for (let i = 0; i < nLayers; i++) {
      const firstNorm = full.nodes.find((x) => x.name === `layers.${i}.attention_norm`)!;
      blockInputs.add(firstNorm.inputs[0]);
    }
    for (const x of full.nodes) {
      if (x.phase !== 'backward') continue;
      for (const t of x.inputs) {
        if (!fwdOutputs.has(t) || fwdOutputs.get(t) === undefined) continue; // not a block activation
        // the last block's output feeds the final norm: read by norm.bwd (layer undefined), allowed
        expect(blockInputs.has(t) || x.layer === undefined, `${x.name} reads forward activation ${t}`).toBe(true);
      }
    }
  });

  it('makes recomputed activations with the same shapes as the forward ones', () => {
    for (const x of full.nodes.filter(isRecomputeNode)) {
      const fwdName = x.name.slice(0, -RECOMPUTE_SUFFIX.length);
      const f = full.nodes.find((y) => y.name === fwdName)!;
      expect(f, fwdName).toBeDefined();
      expect(x.op).toBe(f.op);
      expect(x.attrs).toEqual({ ...f.attrs, recompute: true });
      expect(x.outputs.map((t) => full.tensors[t].shape)).toEqual(f.outputs.map((t) => full.tensors[t].shape));
    }
  });
});

describe('buildStepGraph with activationCheckpointing selective (torchtitan op policy)', () => {
  const sel = tiny('selective');
  const nLayers = MODEL_PRESETS.tiny.nLayers;

  it('recomputes every second matmul (wk, wo, w3) and the norms, the attention residual and SwiGLU', () => {
    for (let i = 0; i < nLayers; i++) {
      const p = `layers.${i}`;
      const got = sel.nodes.filter((x) => isRecomputeNode(x) && x.layer === i).map((x) => x.name);
      const want = [
        'attention_norm',
        'attention.wk',
        'attention.wo',
        'attention.residual',
        'ffn_norm',
        'feed_forward.w3',
        'feed_forward.swiglu',
      ];
      expect(got).toEqual(want.map((m) => `${p}.${m}${RECOMPUTE_SUFFIX}`));
    }
  });

  it('reads the saved q, v, attention output and w1 output from the forward', () => {
    const fwdOut = (name: string) => sel.nodes.find((x) => x.name === name && x.phase === 'forward')!.outputs;
    for (let i = 0; i < nLayers; i++) {
      const p = `layers.${i}`;
      const saved = [
        ...fwdOut(`${p}.attention.wq`),
        ...fwdOut(`${p}.attention.wv`),
        ...fwdOut(`${p}.attention.sdpa`),
        ...fwdOut(`${p}.feed_forward.w1`),
      ];
      const notSaved = [
        ...fwdOut(`${p}.attention.wk`),
        ...fwdOut(`${p}.attention.wo`),
        ...fwdOut(`${p}.feed_forward.w3`),
        ...fwdOut(`${p}.ffn_norm`),
      ];
      const bwdReads = new Set(sel.nodes.filter((x) => x.phase === 'backward').flatMap((x) => x.inputs));
      for (const t of saved) expect(bwdReads.has(t), t).toBe(true);
      for (const t of notSaved) expect(bwdReads.has(t), t).toBe(false);
    }
  });
});

describe('activation checkpointing on the llama3 presets', () => {
  // Built once: the 405b graph has ~17k nodes.
  const cases = [
    ['llama3-8b', 8],
    ['llama3-405b', 1024],
  ] as const;
  const built = cases.map(([model, n]) => ({
    model,
    none: buildStepGraph({ model, worldSize: n }),
    full: buildStepGraph({ model, worldSize: n, activationCheckpointing: 'full' }),
    selective: buildStepGraph({ model, worldSize: n, activationCheckpointing: 'selective' }),
  }));

  it.each(built.map((b) => [b.model, b] as const))(
    '%s: selective sits between none and full in peak memory and FLOPs',
    (_m, b) => {
      const peak = (g: StepGraph) => scheduleMemoryProfile(g).peakBytes;
      expect(peak(b.selective)).toBeLessThan(peak(b.none));
      expect(peak(b.selective)).toBeGreaterThan(peak(b.full));
      expect(sumFlops(b.selective)).toBeGreaterThan(sumFlops(b.none));
      expect(sumFlops(b.selective)).toBeLessThan(sumFlops(b.full));
    },
  );

  it.each(built.map((b) => [b.model, b] as const))('%s: peak memory drops by a large factor', (_m, b) => {
    const p0 = scheduleMemoryProfile(b.none);
    const p1 = scheduleMemoryProfile(b.full);
    expect(p1.persistentBytes).toBe(p0.persistentBytes);
    // the non-persistent part (activations, gathered params, grads) shrinks ≥ 4×; the peak ≥ 2.5×
    expect((p0.peakBytes - p0.persistentBytes) / (p1.peakBytes - p1.persistentBytes)).toBeGreaterThan(4);
    expect(p0.peakBytes / p1.peakBytes).toBeGreaterThan(2.5);
  });

  it.each(built.map((b) => [b.model, b] as const))('%s: FLOPs rise by about one forward of the blocks', (_m, b) => {
    const delta = sumFlops(b.full) - sumFlops(b.none);
    const rel = (a: number, ref: number) => Math.abs(a - ref) / ref;
    expect(
      rel(
        delta,
        sumFlops(b.full, (i) => isRecomputeNode(b.full.nodes[i])),
      ),
    ).toBeLessThan(1e-9);
    const blockFwd = sumFlops(
      b.none,
      (i) => b.none.nodes[i].phase === 'forward' && b.none.nodes[i].layer !== undefined,
    );
    // reference: the forward minus what the partitioner leaves dead (w2 projection, final residual add)
    const dead = sumFlops(b.none, (i) => {
      const x = b.none.nodes[i];
      return x.phase === 'forward' && x.kind === 'compute' && /\.feed_forward\.(w2|residual)$/.test(x.name);
    });
    const blockFwdCompute = sumFlops(
      b.none,
      (i) =>
        b.none.nodes[i].phase === 'forward' &&
        b.none.nodes[i].layer !== undefined &&
        b.none.nodes[i].kind === 'compute',
    );
    expect(rel(delta, blockFwdCompute - dead)).toBeLessThan(1e-9);
    expect(delta / blockFwd).toBeGreaterThan(0.6);
    expect(delta / blockFwd).toBeLessThanOrEqual(1);
  });
});

describe('backends and the simulator on an AC graph', () => {
  const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const graphs = {
    tiny: tiny('full', 4),
    'tiny selective': tiny('selective', 4),
    'llama3-8b (4 layers)': verifyGraph(
      buildStepGraph({
        model: { ...MODEL_PRESETS['llama3-8b'], nLayers: 4 },
        worldSize: 8,
        activationCheckpointing: 'full',
      }),
    ),
  };
  describe.each(Object.entries(graphs))('%s', (_name, g) => {
    it.each(BACKEND_NAMES)('%s returns a valid schedule the simulator runs', (backend) => {
      const s = runBackend(backend, g, cost);
      const auto = backend === 'aot_eager_autobucketing';
      expectValidSchedule(g, s, auto ? { byteCapBytes: DEFAULT_CAP_BYTES } : {});
      const n = g.meta.worldSize;
      const res = simulate({ worldSize: n, schedules: s, cost });
      expect(res.mismatch).toBeUndefined();
      expectNoOverlapPerStream(res);
      expectCollectivesAligned(res, n);
      expectWaitsAfterCollectives(res, s.graph);
    });
  });
});
