import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  makeCostModel,
  ncclAnalyticalUs,
  ncclCollectiveRuntimeUs,
  ringCollectiveUs,
  ringNetworkUs,
  NETWORK_PRESETS,
} from '../../../src/estimate';
import type { RingNetwork } from '../../../src/estimate';
import { fixtureUrl } from '../../helpers/fixtures';

interface TorchRow {
  collective: string;
  output_shape: number[];
  dtype: 'bfloat16' | 'float32';
  world_size: number;
  torch_estimate_ms: number;
}
const REF = fixtureUrl('torch_collective_estimates.json');
const rows: TorchRow[] = JSON.parse(readFileSync(REF, 'utf8')).rows;
const DTYPE_SIZE = { bfloat16: 2, float32: 4 } as const;

describe('ringCollectiveUs', () => {
  it('is (n−1)·α + ((n−1)/n)·S/β', () => {
    // 8 ranks, α = 2 µs, 1 GB at 100 GB/s: 7·2 + 7/8·10 000 µs
    expect(ringCollectiveUs(1e9, 8, 2, 100e9)).toBeCloseTo(14 + 8750, 6);
    expect(ringCollectiveUs(123, 1, 2, 100e9)).toBe(0);
  });

  it('uses inter-node α and β once the group leaves a node, β at the message size: β·S/(S + S½)', () => {
    const net = NETWORK_PRESETS['nvlink-ib'] as RingNetwork;
    const S = 64e6;
    const intraBeta = (net.betaIntraBytesPerS * S) / (S + net.halfBwIntraBytes!);
    const interBeta = (net.betaInterBytesPerS * S) / (S + net.halfBwInterBytes!);
    expect(ringNetworkUs(net, S, 8)).toBeCloseTo(7 * net.alphaIntraUs + ((7 / 8) * S * 1e6) / intraBeta, 6);
    expect(ringNetworkUs(net, S, 16)).toBeCloseTo(15 * net.alphaInterUs + ((15 / 16) * S * 1e6) / interBeta, 6);
  });

  it('reaches half the bus bandwidth at S½ and nearly all of it at 100·S½ (nccl-tests curve shape)', () => {
    const net = NETWORK_PRESETS['nvlink-ib'] as RingNetwork;
    const busBw = (S: number) => ((7 / 8) * S * 1e6) / (ringNetworkUs(net, S, 8) - 7 * net.alphaIntraUs);
    expect(busBw(net.halfBwIntraBytes!) / net.betaIntraBytesPerS).toBeCloseTo(0.5, 9);
    expect(busBw(100 * net.halfBwIntraBytes!) / net.betaIntraBytesPerS).toBeGreaterThan(0.99);
    // a preset without S½ keeps β at every size
    const flat: RingNetwork = { ...net, halfBwIntraBytes: undefined };
    expect(ringNetworkUs(flat, 1e6, 8)).toBeCloseTo(
      7 * net.alphaIntraUs + ((7 / 8) * 1e6 * 1e6) / net.betaIntraBytesPerS,
      6,
    );
  });
});

describe('ncclCollectiveRuntimeUs', () => {
  it('matches the formula by hand on one Hopper node (141 GB/s LL cap)', () => {
    // bus bw = min(141, 2·300/3) = 141 GB/s; algo bw = 141·8/7; latency 6.6 + 7·0.6 µs
    const GiB = 1024 ** 3;
    const t = ncclCollectiveRuntimeUs(GiB, 8, 'all_gather', 'hopper', {
      gpusPerNode: 8,
      intraNodeBwGBs: 300,
      interNodeBwGBs: 25,
    });
    expect(t).toBeCloseTo(1e6 / ((141 * 8) / 7) + 6.6 + 4.2, 6);
  });

  it('uses the inter-node bandwidth and network latency on 4 nodes', () => {
    // 32 ranks, 4 nodes: bus bw = min(llMaxBws[0][2] = 20.4, 2·25/4 = 12.5); 31 steps, 3 of them inter-node,
    // intra steps cost max(0.6, 1.0) µs
    const GiB = 1024 ** 3;
    const t = ncclCollectiveRuntimeUs(GiB, 32, 'reduce_scatter', 'hopper', {
      gpusPerNode: 8,
      intraNodeBwGBs: 300,
      interNodeBwGBs: 25,
    });
    expect(t).toBeCloseTo(1e6 / ((12.5 * 32) / 31) + 6.6 + 28 * 1.0 + 3 * 2.7, 6);
  });

  it('is zero on one rank', () => {
    expect(ncclAnalyticalUs('all_gather', 1e6, 1)).toBe(0);
  });
});

describe('ncclAnalyticalUs vs torch 2.11', () => {
  const model = makeCostModel({ hardware: 'h200', network: 'nccl-analytical' });
  it.each(rows.map((r, i) => [i, r] as const))('row %i is within 5 %% of torch', (_i, r) => {
    const outBytes = r.output_shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[r.dtype];
    const isAg = r.collective.startsWith('all_gather');
    // contract: bytes = gathered output (AG) or full input (RS)
    const bytes = isAg ? outBytes : outBytes * r.world_size;
    const us = model.collectiveUs(isAg ? 'all_gather' : 'reduce_scatter', bytes, r.world_size, 'bf16');
    const refUs = r.torch_estimate_ms * 1000;
    expect(Math.abs(us - refUs) / refUs).toBeLessThan(0.05);
  });

  it('covers every row of the reference table', () => {
    expect(rows.length).toBeGreaterThan(30);
  });
});
