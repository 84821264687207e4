// CUDA graphs in the cost model: graph_trainer's cudagraph_pass replays the step as one graph, so
// each kernel pays the preset's graph launch (CUDA.jl's 70 µs for 80 graphed kernels) instead of the
// eager host launch (4 µs). The time removed is the kernels launched × the difference, nothing else.
import { describe, expect, it } from 'vitest';
import { HARDWARE_PRESETS, hardwareAssumptions, makeCostModel } from '../../../src/estimate';
import { attentionCompanions } from '../../../src/estimate/compute';
import { kernelLaunchUs } from '../../../src/estimate/hardware';
import type { GraphNode } from '../../../src/graph/types';

function node(i: number, extra: Partial<GraphNode> = {}): GraphNode {
  return {
    id: i,
    name: `n${i}`,
    kind: 'compute',
    op: 'add',
    inputs: [],
    outputs: [],
    flops: 1e6 * (i + 1),
    bytesMoved: 1e6 * ((i % 7) + 1),
    matmulLike: false,
    phase: 'forward',
    ...extra,
  };
}

const h100 = HARDWARE_PRESETS.h100;
const eager = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const graphed = makeCostModel({ hardware: 'h100', network: 'nvlink-ib', cudaGraphs: true });
const sum = (nodes: readonly GraphNode[], f: (n: GraphNode) => number) => nodes.reduce((a, n) => a + f(n), 0);

describe('CUDA graphs in the cost model', () => {
  it('replays a kernel at 70 / 80 µs (CUDA.jl: 80 kernels in 70 µs), launches it eagerly at 4 µs', () => {
    expect(kernelLaunchUs(h100, true)).toBe(0.875);
    expect(kernelLaunchUs(h100, false)).toBe(h100.launchUs);
    expect(kernelLaunchUs({ ...h100, graphLaunchUs: 2 }, true)).toBe(2); // a preset may carry its own
  });

  it('removes exactly N × (eager − graphed launch) from a graph of N kernels', () => {
    for (const n of [1, 17, 500]) {
      const kernels = Array.from({ length: n }, (_, i) => node(i, i % 3 === 0 ? { kind: 'cast', op: 'cast' } : {}));
      const removed = sum(kernels, (k) => eager.computeUs(k)) - sum(kernels, (k) => graphed.computeUs(k));
      expect(removed).toBeCloseTo(n * (h100.launchUs - 0.875), 6);
    }
  });

  it('counts the eager kernels around attention as launches too', () => {
    const attrs = { batch: 1, seq: 2048, heads: 32, kvHeads: 8, headDim: 128 };
    const attn = node(0, { op: 'attention', matmulLike: true, flops: 1e12, attrs });
    const launches = 1 + attentionCompanions(attn, 'bf16').launches;
    expect(launches).toBeGreaterThan(1);
    expect(eager.computeUs(attn) - graphed.computeUs(attn)).toBeCloseTo(launches * (h100.launchUs - 0.875), 6);
  });

  it('leaves collectives, views, waits, measured and imported times alone', () => {
    expect(graphed.collectiveUs('all_gather', 1e8, 8, 'bf16')).toBe(eager.collectiveUs('all_gather', 1e8, 8, 'bf16'));
    for (const kind of ['view', 'wait'] as const) expect(graphed.computeUs(node(0, { kind }))).toBe(0);
    expect(graphed.computeUs(node(0, { estMs: 0.25 }))).toBe(250);
    const measured = makeCostModel({ hardware: 'h100', network: 'nvlink-ib', cudaGraphs: true, measuredUs: { n0: 7 } });
    expect(measured.computeUs(node(0))).toBe(7);
  });

  it('says so in the label, and the preset rows cite the figure', () => {
    expect(graphed.label).toContain('CUDA graphs');
    expect(eager.label).not.toContain('CUDA graphs');
    const row = hardwareAssumptions(h100).find((r) => r.key === 'graph-launch');
    expect(row?.value).toBe('0.875 µs');
    expect(row?.source).toMatch(/CUDA\.jl/);
  });
});
