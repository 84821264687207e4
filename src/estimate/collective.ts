// Collective time models: an α-β ring, and a port of torch 2.11's analytical NCCL estimator
// (torch/_inductor/comm_analysis.py estimate_nccl_collective_runtime_impl, itself adapted from
// NCCL src/graph/tuning.cc: ring algorithm, LL protocol, 8 GPUs per node, 2 channels).

import type { CollectiveKind } from '../graph';
import type { NcclAnalyticalNetwork, RingNetwork } from './network';
import type { TorchGpuType } from './hardware';
import { ringSteps } from './nccl_2_13';

/**
 * α-β ring on n ranks: T = (n−1)·α + ((n−1)/n)·S/β, µs. S = gathered output (all-gather) or full
 * input (reduce-scatter), bytes; α in µs per step, β in bytes/s. All steps are synchronized, so a
 * ring that leaves the node runs at the inter-node α and β.
 */
export function ringCollectiveUs(bytes: number, n: number, alphaUs: number, betaBytesPerS: number): number {
  if (n <= 1) return 0;
  return (n - 1) * alphaUs + (((n - 1) / n) * bytes * 1e6) / betaBytesPerS;
}

/**
 * Nodes a process group spans: n members `stride` ranks apart (mesh.ts: tp 1, dp_shard tp, ...),
 * node-aligned rank blocks of gpusPerNode. A group inside one node runs on the intra-node link
 * (NVLink), one spanning nodes on the inter-node one (IB).
 */
export function nodesSpanned(n: number, stride: number, gpusPerNode: number): number {
  return Math.min(n, Math.ceil(((n - 1) * stride + 1) / gpusPerNode));
}

/**
 * The α-β ring with a network preset's intra- or inter-node parameters picked by the nodes the
 * group spans; β is the achieved bus bandwidth at this message size, β·S/(S + S½), when the preset
 * gives S½. An all-reduce is a reduce-scatter then an all-gather of the same bytes: twice the ring.
 * An all-to-all (NCCL's grouped send/recv to each of the n−1 peers) follows nccl-tests'
 * doc/PERFORMANCE.md: busbw = algbw·(n−1)/n with S the bytes a rank sends, so T = (n−1)/n·S/β,
 * the ring's form; S is its larger side (collectiveCostBytes), and its n−1 steps pay α each.
 */
export function ringNetworkUs(
  net: RingNetwork,
  bytes: number,
  n: number,
  kind: CollectiveKind = 'all_gather',
  stride = 1,
): number {
  const intra = nodesSpanned(n, stride, net.gpusPerNode) <= 1;
  const beta = intra ? net.betaIntraBytesPerS : net.betaInterBytesPerS;
  const half = (intra ? net.halfBwIntraBytes : net.halfBwInterBytes) ?? 0;
  const us = ringCollectiveUs(
    bytes,
    n,
    intra ? net.alphaIntraUs : net.alphaInterUs,
    bytes > 0 ? (beta * bytes) / (bytes + half) : beta,
  );
  return kind === 'all_reduce' ? 2 * us : us;
}

/** torch's NCCL_COLL subset we use. */
export type NcclColl = CollectiveKind;

const GPU_INDEX: Readonly<Record<TorchGpuType, number>> = { volta: 0, ampere: 1, hopper: 2, blackwell: 3 };

// LL max bus bandwidth per channel, GB/s: [gpu generation][N1, N2, N4+]
const LL_MAX_BWS: readonly (readonly number[])[] = [
  [39.0, 39.0, 20.4], // Volta-N1 / Intel-N2 / Intel-N4
  [87.7, 22.5, 19.0], // Ampere-N1 / AMD-N2 / AMD-N4 (22.5: avg of ring & tree)
  [141.0, 45.0, 35.0], // Hopper-N1 / AMD-N2 / AMD-N4
  [282.0, 90.0, 70.0], // Blackwell-N1 / AMD-N2 / AMD-N4
];
const RING_LL_BASE_LAT_US = 6.6;
const NVLINK_RING_LL_LAT_US = 0.6;
const NET_RING_LL_LAT_US = 2.7;

/**
 * estimate_nccl_collective_runtime_impl, in µs. `torchSizeBytes` is torch's "tensor storage size":
 * for an FX collective that is input + output bytes (estimate_fx_collective_size).
 */
export function ncclCollectiveRuntimeUs(
  torchSizeBytes: number,
  groupSize: number,
  coll: NcclColl,
  gpuType: TorchGpuType,
  net: Pick<NcclAnalyticalNetwork, 'gpusPerNode' | 'intraNodeBwGBs' | 'interNodeBwGBs'>,
  nodes?: number,
): number {
  const sizeGB = torchSizeBytes / 1024 / 1024 / 1024; // torch's "GB" is GiB here
  // torch assumes consecutive ranks (ceil(n / 8)); a strided mesh group passes the nodes it spans
  const nNodes = nodes ?? Math.ceil(groupSize / net.gpusPerNode);
  const nRanks = groupSize;
  if (nRanks <= 1) return 0;

  // bandwidth: bus bw of 2 channels, capped by the LL max (GPU type on one node, CPU type beyond)
  const index2 = nNodes <= 2 ? nNodes - 1 : 2;
  const index1 = nNodes === 1 ? GPU_INDEX[gpuType] : 0;
  const llMaxBw = LL_MAX_BWS[index1][index2];
  const bw = nNodes === 1 ? net.intraNodeBwGBs : net.interNodeBwGBs;
  const nChannels = 2;
  const busBw = Math.min(llMaxBw, nChannels * bw * (nNodes > 1 || coll === 'all_reduce' ? 1 / 4 : 1 / 3));
  const nSteps = ringSteps(coll, nRanks);
  const algoBwGBPerNs = (busBw * (nRanks / nSteps)) / 1e9;

  // latency: base + per-step NVLink or network hop
  const nInterSteps = coll === 'all_reduce' ? (nNodes > 1 ? 2 * nNodes : 0) : nNodes - 1;
  const netOverheadUs = nNodes > 1 ? 1.0 : 0.0;
  const intraLatUs = Math.max(NVLINK_RING_LL_LAT_US, netOverheadUs);
  const latencyUs = RING_LL_BASE_LAT_US + (nSteps - nInterSteps) * intraLatUs + nInterSteps * NET_RING_LL_LAT_US;

  const transportNs = sizeGB / algoBwGBPerNs;
  return transportNs / 1e3 + latencyUs;
}

/**
 * torch's estimate for one of our collectives, µs. `bytes` follows the CostModel contract (gathered
 * output of an all-gather, full input of a reduce-scatter); torch counts input + output, i.e.
 * bytes·(1 + 1/n) for both kinds, 2·bytes for an all-reduce and an all-to-all (its larger side).
 * `stride`: rank distance of the group's members (mesh.ts), for the nodes it spans.
 */
export function ncclAnalyticalUs(
  kind: CollectiveKind,
  bytes: number,
  n: number,
  gpuType: TorchGpuType = 'ampere',
  net: Pick<NcclAnalyticalNetwork, 'gpusPerNode' | 'intraNodeBwGBs' | 'interNodeBwGBs'> = {
    gpusPerNode: 8,
    intraNodeBwGBs: 300,
    interNodeBwGBs: 25,
  },
  stride = 1,
): number {
  if (n <= 1) return 0;
  const size = kind === 'all_reduce' || kind === 'all_to_all' ? 2 * bytes : bytes + bytes / n;
  return ncclCollectiveRuntimeUs(size, n, kind, gpuType, net, nodesSpanned(n, stride, net.gpusPerNode));
}
