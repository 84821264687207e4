// The cost of an all-to-all (MoE dispatch / combine on ep): the α-β ring form of nccl-tests'
// busbw = algbw·(n−1)/n, and torch's analytical model charging it 2(n−1) ring steps (torch 2.15
// comm_analysis NCCL_COLL.ALL_TO_ALL), each against the formula written out here.
import { describe, expect, it } from 'vitest';
import { NETWORK_PRESETS, ncclAnalyticalUs, ringNetworkUs, type RingNetwork } from '../../../src/estimate';

const net = NETWORK_PRESETS['nvlink-ib'] as RingNetwork;
const MB = 1e6;

describe('all-to-all on the α-β ring', () => {
  it('is (n−1)·α + (n−1)/n · S / β(S) on the link the group spans', () => {
    for (const [n, bytes] of [
      [2, 48 * MB],
      [8, 6 * MB],
    ] as const) {
      const beta = (net.betaIntraBytesPerS * bytes) / (bytes + (net.halfBwIntraBytes ?? 0));
      const hand = (n - 1) * net.alphaIntraUs + (((n - 1) / n) * bytes * 1e6) / beta;
      expect(ringNetworkUs(net, bytes, n, 'all_to_all')).toBeCloseTo(hand, 6);
    }
  });

  it('leaves the node when its members span two nodes (16 consecutive ranks, 8 per node)', () => {
    const bytes = 32 * MB;
    const beta = (net.betaInterBytesPerS * bytes) / (bytes + (net.halfBwInterBytes ?? 0));
    const hand = 15 * net.alphaInterUs + ((15 / 16) * bytes * 1e6) / beta;
    expect(ringNetworkUs(net, bytes, 16, 'all_to_all')).toBeCloseTo(hand, 6);
  });
});

describe("all-to-all in torch's analytical NCCL model", () => {
  it('prices input + output over 2(n−1) ring LL steps', () => {
    const bytes = 12 * MB;
    const n = 2;
    // one node of hoppers: LL max 141 GB/s, 2 channels of 300 GB/s at 1/3 → 200, so 141
    const busBw = 141;
    const nSteps = 2 * (n - 1);
    const algoBwGBPerNs = (busBw * (n / nSteps)) / 1e9;
    const transportUs = (2 * bytes) / 1024 ** 3 / algoBwGBPerNs / 1e3;
    const latencyUs = 6.6 + nSteps * 0.6;
    const net213 = { gpusPerNode: 8, intraNodeBwGBs: 300, interNodeBwGBs: 25 };
    expect(ncclAnalyticalUs('all_to_all', bytes, n, 'hopper', net213)).toBeCloseTo(transportUs + latencyUs, 6);
  });
});
