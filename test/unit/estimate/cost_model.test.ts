import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { HARDWARE_PRESETS, makeCostModel, rooflineUs } from '../../../src/estimate';
import type { GraphNode } from '../../../src/graph/types';

function node(extra: Partial<GraphNode>): GraphNode {
  return {
    id: 0, name: 'n', kind: 'compute', op: 'matmul', inputs: [], outputs: [], flops: 0, bytesMoved: 0,
    matmulLike: false, phase: 'forward', ...extra,
  };
}

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

  it('times a bf16 matmul on tensor cores and an elementwise op on fp32 cores', () => {
    // 8192³ matmul: 2·8192³ FLOP at 989 TFLOP/s; bytes 3·8192²·2 are far below the compute time
    const flops = 2 * 8192 ** 3;
    const mm = node({ matmulLike: true, flops, bytesMoved: 3 * 8192 * 8192 * 2 });
    expect(cost.computeUs(mm)).toBeCloseTo((flops / 989e12) * 1e6 + h100.launchUs, 6);
    // an add over 1 G elements is memory-bound: 12 GB at 3.35 TB/s
    const add = node({ op: 'add', flops: 1e9, bytesMoved: 12e9 });
    expect(cost.computeUs(add)).toBeCloseTo((12e9 / 3350e9) * 1e6 + h100.launchUs, 6);
  });

  it('costs views, waits and collective issues nothing, and keeps an imported estMs', () => {
    expect(cost.computeUs(node({ kind: 'view', flops: 1e12 }))).toBe(0);
    expect(cost.computeUs(node({ kind: 'wait' }))).toBe(0);
    expect(cost.computeUs(node({ kind: 'all_gather', estMs: 3 }))).toBe(0);
    expect(cost.computeUs(node({ estMs: 0.25, flops: 1e15 }))).toBeCloseTo(250, 9);
  });

  it('uses measured times and scales when given', () => {
    const m = makeCostModel({ hardware: 'a100', network: 'nvlink-ib', measuredUs: { n: 7 }, computeScale: 2, commScale: 3 });
    expect(m.computeUs(node({ flops: 1e15 }))).toBe(14);
    expect(m.collectiveUs('all_gather', 1e9, 8, 'bf16')).toBeCloseTo(3 * cost.collectiveUs('all_gather', 1e9, 8, 'bf16'), 6);
    expect(m.label).toContain('measured');
  });

  it('has a readable label naming hardware and network', () => {
    expect(cost.label).toContain('h100');
    expect(cost.label).toContain('nvlink-ib');
  });

  it('rejects an unknown hardware, network or dtype with the allowed values', () => {
    expect(() => makeCostModel({ hardware: 'tpu' as never, network: 'nvlink-ib' })).toThrow(/hardware must be one of \[h100, h200, a100\], got "tpu"/);
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
