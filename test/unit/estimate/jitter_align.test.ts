import { describe, expect, it } from 'vitest';
import { alignCostModels, jitteredCostModels, makeCostModel } from '../../../src/estimate';
import { lowerMedian } from '../../../src/util/median';
import type { GraphNode, StepGraph } from '../../../src/graph/types';

function mkNode(i: number): GraphNode {
  return {
    id: i,
    name: `mm_${i}`,
    kind: 'compute',
    op: 'matmul',
    inputs: [],
    outputs: [],
    flops: 1e12 * (i + 1),
    bytesMoved: 1e6,
    matmulLike: true,
    phase: 'forward',
  };
}
const nodes = Array.from({ length: 20 }, (_, i) => mkNode(i));
const graph: StepGraph = {
  nodes,
  tensors: {},
  params: [],
  meta: { model: 't', worldSize: 8, paramDtype: 'bf16', reduceDtype: 'fp32', batch: 1, seqLen: 1 },
};
const base = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });

describe('jitteredCostModels', () => {
  it('keeps every time within ±jitterPct and differs between ranks', () => {
    const models = jitteredCostModels(base, 8, { jitterPct: 10, seed: 1 });
    let differ = 0;
    for (const n of nodes) {
      const b = base.computeUs(n);
      const ts = models.map((m) => m.computeUs(n));
      for (const t of ts) {
        expect(t).toBeGreaterThanOrEqual(b * 0.9);
        expect(t).toBeLessThanOrEqual(b * 1.1);
      }
      if (new Set(ts).size > 1) differ++;
    }
    expect(differ).toBe(nodes.length);
  });

  it('is deterministic for a seed and changes with the seed', () => {
    const a = jitteredCostModels(base, 4, { jitterPct: 5, seed: 7 }).map((m) => nodes.map((n) => m.computeUs(n)));
    const b = jitteredCostModels(base, 4, { jitterPct: 5, seed: 7 }).map((m) => nodes.map((n) => m.computeUs(n)));
    const c = jitteredCostModels(base, 4, { jitterPct: 5, seed: 8 }).map((m) => nodes.map((n) => m.computeUs(n)));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("slows the straggler rank's compute by its factor, not its collectives", () => {
    const [r0, r1] = jitteredCostModels(base, 2, { jitterPct: 0, seed: 1, straggler: { rank: 1, factor: 1.5 } });
    expect(r0.computeUs(nodes[3])).toBeCloseTo(base.computeUs(nodes[3]), 9);
    expect(r1.computeUs(nodes[3])).toBeCloseTo(1.5 * base.computeUs(nodes[3]), 9);
    expect(r1.collectiveUs('reduce_scatter', 1e8, 8, 'fp32')).toBeCloseTo(
      base.collectiveUs('reduce_scatter', 1e8, 8, 'fp32'),
      9,
    );
  });

  it('jitters collectives within ±jitterPct too', () => {
    const b = base.collectiveUs('all_gather', 1e8, 8, 'bf16');
    const ts = jitteredCostModels(base, 16, { jitterPct: 10, seed: 2 }).map((m) =>
      m.collectiveUs('all_gather', 1e8, 8, 'bf16'),
    );
    for (const t of ts) expect(Math.abs(t / b - 1)).toBeLessThanOrEqual(0.1);
    expect(new Set(ts).size).toBeGreaterThan(1);
  });

  it('spreads the noise over its whole range (no hash clustering)', () => {
    const m = jitteredCostModels(base, 1, { jitterPct: 50, seed: 11 })[0];
    const many = Array.from({ length: 2000 }, (_, i) => mkNode(i));
    const u = many.map((n) => m.computeUs(n) / base.computeUs(n) - 1); // in [-0.5, 0.5)
    const mean = u.reduce((a, x) => a + x, 0) / u.length;
    expect(Math.abs(mean)).toBeLessThan(0.03); // σ of the mean ≈ 0.29·0.5/√2000 ≈ 0.003
    expect(Math.min(...u)).toBeLessThan(-0.45);
    expect(Math.max(...u)).toBeGreaterThan(0.45);
  });

  it('rejects a straggler rank outside the world', () => {
    expect(() => jitteredCostModels(base, 2, { jitterPct: 1, seed: 1, straggler: { rank: 2, factor: 2 } })).toThrow(
      /straggler.rank/,
    );
  });
});

describe('lowerMedian', () => {
  it('takes the middle value, the lower one for an even count (torch.median)', () => {
    expect(lowerMedian([3, 1, 2])).toBe(2);
    expect(lowerMedian([4, 1, 3, 2])).toBe(2);
  });
});

describe('alignCostModels', () => {
  it('makes every rank agree on the per-node median of the jittered estimates', () => {
    const models = jitteredCostModels(base, 5, { jitterPct: 20, seed: 3 });
    const aligned = alignCostModels(models, graph);
    for (const n of nodes) {
      const ts = models.map((m) => m.computeUs(n)).sort((a, b) => a - b);
      expect(aligned.computeUs(n)).toBe(ts[2]);
    }
    const cs = models.map((m) => m.collectiveUs('all_gather', 1e8, 8, 'bf16')).sort((a, b) => a - b);
    expect(aligned.collectiveUs('all_gather', 1e8, 8, 'bf16')).toBe(cs[2]);
  });

  it('gives the same model whichever rank order it is built from', () => {
    const models = jitteredCostModels(base, 4, { jitterPct: 20, seed: 9 });
    const a = alignCostModels(models, graph);
    const b = alignCostModels([...models].reverse(), graph);
    expect(nodes.map((n) => a.computeUs(n))).toEqual(nodes.map((n) => b.computeUs(n)));
  });
});
