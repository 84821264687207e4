// The grouped-GEMM rate (estimate/hardware.ts `groupedGemm`) against the torch._grouped_mm MoE
// forwards ByteDance-Seed/VeOmni PR #460 timed on one H100 (32768 tokens, hidden 2048, bf16):
//   128 experts, FFN 768, top-8:   10.218 ms
//   512 experts, FFN 512, top-10:  11.411 ms
// The forward is priced as this cost model prices an MoE block's kernels: the permute into expert
// order (a gather of the routed rows), the grouped GEMMs w1, w3, w2, SwiGLU (two eager kernels) and
// the combine (read the routed rows, write the tokens).
import { describe, expect, it } from 'vitest';
import { graphNode } from '../../helpers/graph_node';
import { HARDWARE_PRESETS, makeCostModel } from '../../../src/estimate';
import type { GraphNode } from '../../../src/graph/types';

const BF16 = 2;

const node = graphNode;

/** x[R, K] · W_eᵀ over `experts` groups → [R, N] (forward), as graph/moe.ts emits it. */
const groupedMm = (R: number, N: number, K: number, experts: number) =>
  node({
    op: 'grouped_mm',
    matmulLike: true,
    flops: 2 * R * N * K,
    bytesMoved: (R * K + experts * N * K + R * N) * BF16,
    attrs: { M: R, N, K, groups: experts, transA: false, transB: true },
  });

interface MoeShape {
  readonly tokens: number;
  readonly dim: number;
  readonly ffn: number;
  readonly experts: number;
  readonly topK: number;
}

/** The forward's kernels: permute, w1, w3, SwiGLU (silu, mul: 5 passes of [R, F]), w2, combine. */
function moeForward(s: MoeShape): GraphNode[] {
  const R = s.tokens * s.topK;
  return [
    node({ op: 'moe_permute', bytesMoved: 2 * R * s.dim * BF16 }),
    groupedMm(R, s.ffn, s.dim, s.experts),
    groupedMm(R, s.ffn, s.dim, s.experts),
    node({ op: 'swiglu', flops: 4 * R * s.ffn, bytesMoved: 3 * R * s.ffn * BF16 }),
    groupedMm(R, s.dim, s.ffn, s.experts),
    node({ op: 'moe_scatter_add', bytesMoved: (R + s.tokens) * s.dim * BF16 }),
  ];
}

const VEOMNI_H100: ReadonlyArray<{ shape: MoeShape; ms: number }> = [
  { shape: { tokens: 32768, dim: 2048, ffn: 768, experts: 128, topK: 8 }, ms: 10.218 },
  { shape: { tokens: 32768, dim: 2048, ffn: 512, experts: 512, topK: 10 }, ms: 11.411 },
];

describe('grouped GEMMs (torch._grouped_mm)', () => {
  const h100 = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const forwardMs = (s: MoeShape) => moeForward(s).reduce((t, n) => t + h100.computeUs(n), 0) / 1000;

  it.each(VEOMNI_H100)('prices a measured H100 MoE forward within 10 % ($ms ms)', ({ shape, ms }) => {
    expect(Math.abs(forwardMs(shape) / ms - 1)).toBeLessThan(0.1);
  });

  it('runs a grouped GEMM below a plain GEMM of the same FLOPs and shape', () => {
    const grouped = groupedMm(262144, 768, 2048, 128);
    const plain = { ...grouped, op: 'matmul' as const, attrs: { M: 262144, N: 768, K: 2048 } };
    expect(h100.computeUs(grouped)).toBeGreaterThan(2 * h100.computeUs(plain));
  });

  it('takes the tile factor at the per-expert rows: more experts over the same rows run slower', () => {
    const few = h100.computeUs(groupedMm(8192, 1408, 2048, 8));
    const many = h100.computeUs(groupedMm(8192, 1408, 2048, 64));
    expect(many).toBeGreaterThan(few);
    // 128 rows per expert: the per-expert d is 128, half the grouped rate
    const g = HARDWARE_PRESETS.h100.achieved!.groupedGemm!;
    const us = ((2 * 8192 * 1408 * 2048) / (989e12 * g * 0.5)) * 1e6 + HARDWARE_PRESETS.h100.launchUs;
    expect(many).toBeCloseTo(us, 6);
  });

  it('splits the weight gradient by its contracted rows (transA)', () => {
    const R = 8192;
    const dW = node({
      op: 'grouped_mm',
      matmulLike: true,
      flops: 2 * R * 1408 * 2048,
      attrs: { M: 1408, N: 2048, K: R, groups: 64, transA: true },
    });
    expect(h100.computeUs(dW)).toBeCloseTo(h100.computeUs(groupedMm(R, 1408, 2048, 64)), 6);
  });

  it('runs one mm and one launch per expert where no grouped kernel exists (A100)', () => {
    const a100 = makeCostModel({ hardware: 'a100', network: 'nvlink-ib' });
    const hw = HARDWARE_PRESETS.a100;
    expect(hw.achieved!.groupedGemm).toBeUndefined();
    const n = groupedMm(65536, 1408, 2048, 64); // 1024 rows per expert
    const a = hw.achieved!;
    const eff = (a.gemm * 1024) / (1024 + a.gemmHalfDim);
    expect(a100.computeUs(n)).toBeCloseTo((n.flops / (312e12 * eff)) * 1e6 + 64 * hw.launchUs, 6);
  });
});

describe('CUDA graphs around an MoE block (graph_trainer cudagraph.py is_cudagraphable)', () => {
  const eager = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const graphed = makeCostModel({ hardware: 'h100', network: 'nvlink-ib', cudaGraphs: true });
  const launch = HARDWARE_PRESETS.h100.launchUs;

  it('replays a plain GEMM from the graph but launches a Hopper grouped GEMM eagerly', () => {
    const mm = node({ op: 'matmul', matmulLike: true, flops: 2 * 4096 ** 3, attrs: { M: 4096, N: 4096, K: 4096 } });
    expect(eager.computeUs(mm) - graphed.computeUs(mm)).toBeGreaterThan(launch / 2);
    const grouped = groupedMm(24576, 1408, 2048, 32);
    expect(graphed.computeUs(grouped)).toBe(eager.computeUs(grouped));
  });

  it('launches an op on data-dependent shapes eagerly', () => {
    const permute = node({ op: 'moe_permute', bytesMoved: 1e8 });
    expect(graphed.computeUs(permute)).toBeLessThan(eager.computeUs(permute));
    const routed = { ...permute, attrs: { dynamicShape: true } };
    expect(graphed.computeUs(routed)).toBe(eager.computeUs(routed));
  });
});
