import { describe, expect, it } from 'vitest';
import { graphNode } from '../../helpers/graph_node';
import { ConfigError } from '../../../src/errors';
import { HARDWARE_PRESETS, describeAchieved, makeCostModel, rooflineUs } from '../../../src/estimate';
import type { GraphNode } from '../../../src/graph/types';

const node = (extra: Partial<GraphNode>): GraphNode => graphNode({ op: 'matmul', ...extra });

describe('rooflineUs', () => {
  it('takes the larger of compute and memory time plus launch', () => {
    // 1 TFLOP at 1 PFLOP/s = 1000 µs; 1 GB at 1 TB/s = 1000 µs; 2 GB → 2000 µs
    expect(rooflineUs(1e12, 1e9, 1e15, 1e12, 5)).toBeCloseTo(1005, 9);
    expect(rooflineUs(1e12, 2e9, 1e15, 1e12, 5)).toBeCloseTo(2005, 9);
  });
});

describe('makeCostModel', () => {
  const h100 = HARDWARE_PRESETS.h100;
  const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });

  it('times a bf16 matmul at the achieved GEMM rate and an elementwise op at the achieved HBM rate', () => {
    // 8192³ matmul: 2·8192³ FLOP at 989 TFLOP/s × MAMF 0.80 × 8192/(8192 + 128); bytes far below
    const flops = 2 * 8192 ** 3;
    const mm = node({ matmulLike: true, flops, bytesMoved: 3 * 8192 * 8192 * 2, attrs: { M: 8192, N: 8192, K: 8192 } });
    expect(cost.computeUs(mm)).toBeCloseTo((flops / (989e12 * 0.8 * (8192 / 8320))) * 1e6 + h100.launchUs, 6);
    // an add over 1 G elements is memory-bound: 12 GB at 80 % of 3.35 TB/s
    const add = node({ op: 'add', flops: 1e9, bytesMoved: 12e9 });
    expect(cost.computeUs(add)).toBeCloseTo((12e9 / (0.8 * 3350e9)) * 1e6 + h100.launchUs, 6);
  });

  it('runs a thin GEMM slower per FLOP than a square one (tile / wave quantization)', () => {
    const t = (M: number, N: number, K: number) =>
      cost.computeUs(node({ matmulLike: true, flops: 2 * M * N * K, attrs: { M, N, K } })) - h100.launchUs;
    const tflops = (M: number, N: number, K: number) => (2 * M * N * K) / t(M, N, K) / 1e6;
    expect(tflops(8192, 8192, 8192)).toBeGreaterThan(tflops(8192, 1024, 4096));
    expect(tflops(8192, 128, 4096)).toBeCloseTo(989 * 0.8 * 0.5, 6); // half the large-GEMM rate at gemmHalfDim
  });

  it('times flash attention forward and backward at their own achieved rates', () => {
    const fwd = node({ op: 'attention', matmulLike: true, flops: 1e12 });
    const bwd = node({ op: 'attention_bwd', matmulLike: true, flops: 1e12 });
    expect(cost.computeUs(fwd)).toBeCloseTo((1e12 / (989e12 * h100.achieved!.attentionFwd)) * 1e6 + h100.launchUs, 6);
    expect(cost.computeUs(bwd)).toBeGreaterThan(cost.computeUs(fwd)); // FA2's backward runs at fewer TFLOPS
  });

  it("charges the loss the fp32 traffic of torchtitan's cross_entropy(pred.float())", () => {
    const T = 8192;
    const V = 128256;
    const ce = node({ op: 'cross_entropy', flops: 5 * T * V, bytesMoved: 2 * T * V, attrs: { T, V } });
    expect(cost.computeUs(ce)).toBeCloseTo(((18 * T * V) / (0.8 * 3350e9)) * 1e6 + h100.launchUs, 6);
  });

  it('describes what each preset assumes, in TFLOPS and TB/s (the explain panel)', () => {
    expect(describeAchieved(HARDWARE_PRESETS.h100)).toBe(
      'h100: GEMM 791 TFLOPS (80 %) large, half that at min dim 128; flash attention fwd 346 TFLOPS (35 %), bwd 297 TFLOPS (30 %); memory-bound 2.68 TB/s (80 %); launch 4 µs',
    );
    // torchtitan's H100: 500 W between NVL (400 W, 835) and SXM (700 W, 989), 2.4 TB/s HBM2e
    expect(HARDWARE_PRESETS['h100-96gb'].bf16Flops).toBeCloseTo(835e12 + (154e12 * 100) / 300, 0);
    expect(describeAchieved(HARDWARE_PRESETS['h100-96gb'])).toMatch(/GEMM 709 TFLOPS .* memory-bound 1\.92 TB\/s/);
    const { achieved: _, ...plain } = HARDWARE_PRESETS.a100;
    expect(describeAchieved(plain)).toMatch(/plain roofline/);
  });

  it('charges SwiGLU the passes of its two eager kernels (silu, mul; backward mul, mul, silu_backward)', () => {
    const fwd = node({ op: 'swiglu', flops: 1, bytesMoved: 3e9 });
    const bwd = node({ op: 'swiglu_bwd', flops: 1, bytesMoved: 5e9 });
    expect(cost.computeUs(fwd)).toBeCloseTo((5e9 / (0.8 * 3350e9)) * 1e6 + h100.launchUs, 6);
    expect(cost.computeUs(bwd)).toBeCloseTo((9e9 / (0.8 * 3350e9)) * 1e6 + h100.launchUs, 6);
  });

  it('is the plain roofline on a custom preset without achieved efficiencies', () => {
    const { achieved: _, ...plain } = h100;
    const m = makeCostModel({ hardware: plain, network: 'nvlink-ib' });
    const mm = node({ matmulLike: true, flops: 1e12, attrs: { M: 8192, N: 8192, K: 8192 } });
    expect(m.computeUs(mm)).toBeCloseTo((1e12 / 989e12) * 1e6 + h100.launchUs, 6);
    expect(m.label).toContain('roofline');
    expect(cost.label).toContain('achieved');
  });

  it('costs views, waits and collective issues nothing, and keeps an imported estMs', () => {
    expect(cost.computeUs(node({ kind: 'view', flops: 1e12 }))).toBe(0);
    expect(cost.computeUs(node({ kind: 'wait' }))).toBe(0);
    expect(cost.computeUs(node({ kind: 'all_gather', estMs: 3 }))).toBe(0);
    expect(cost.computeUs(node({ estMs: 0.25, flops: 1e15 }))).toBeCloseTo(250, 9);
  });

  it('uses measured times and scales when given', () => {
    const m = makeCostModel({
      hardware: 'a100',
      network: 'nvlink-ib',
      measuredUs: { n: 7 },
      computeScale: 2,
      commScale: 3,
    });
    expect(m.computeUs(node({ flops: 1e15 }))).toBe(14);
    expect(m.collectiveUs('all_gather', 1e9, 8, 'bf16')).toBeCloseTo(
      3 * cost.collectiveUs('all_gather', 1e9, 8, 'bf16'),
      6,
    );
    expect(m.label).toContain('measured');
  });

  it('has a readable label naming hardware and network', () => {
    expect(cost.label).toContain('h100');
    expect(cost.label).toContain('nvlink-ib');
  });

  it('rejects an unknown hardware, network or dtype with the allowed values', () => {
    expect(() => makeCostModel({ hardware: 'tpu' as never, network: 'nvlink-ib' })).toThrow(
      /hardware must be one of \[h100, h100-96gb, h200, a100\], got "tpu"/,
    );
    expect(() => makeCostModel({ hardware: 'h100', network: 'wifi' as never })).toThrow(ConfigError);
    try {
      makeCostModel({ hardware: 'h100', network: 'nvlink-ib', computeDtype: 'int8' as never });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe('computeDtype');
      expect((e as Error).message).toContain('bf16');
    }
    expect(() => makeCostModel({ hardware: 'h100', network: 'nvlink-ib', commScale: 0 })).toThrow(/commScale/);
  });
});
