// torch 2.13's analytical NCCL model (torch/_inductor/comm_analysis.py): every (algorithm,
// protocol) pair NCCL's tuning.cc models — ring LL / LL128 / Simple, tree for all-reduce — and
// the fastest one; and compute_min_saturation_bytes, the message size that reaches 90 % of a
// link's bandwidth on torch's empirical per-interconnect profiles. 2.11's single ring-LL model
// stays in collective.ts.

import type { CollectiveKind } from '../graph';
import type { TorchGpuType } from './hardware';

/**
 * Ring steps torch's model charges a collective on n ranks: 2(n−1) for an all-reduce and, as torch
 * 2.15's comm_analysis charges NCCL_COLL.ALL_TO_ALL, for an all-to-all; n−1 for the others.
 */
export const ringSteps = (coll: CollectiveKind, n: number): number =>
  coll === 'all_reduce' || coll === 'all_to_all' ? 2 * (n - 1) : n - 1;

/** What torch detects about the machine: GPU generation, GPUs per node, NVLink present. */
export interface Nccl213Topology {
  readonly gpuType: TorchGpuType;
  readonly gpusPerNode: number;
  readonly nvlink: boolean;
  /** torch._inductor.config.intra_node_bw / inter_node_bw overrides, GB/s. */
  readonly intraNodeBwGBs?: number;
  readonly interNodeBwGBs?: number;
}

export const NCCL_213_DEFAULT_TOPOLOGY: Nccl213Topology = { gpuType: 'hopper', gpusPerNode: 8, nvlink: true };

const GPU = { volta: 0, ampere: 1, hopper: 2, blackwell: 3 } as const;
const TREE = 0;
const RING = 1;
const LL = 0;
const LL128 = 1;
const SIMPLE = 2;

const BASE_LAT = [
  [6.8, 14.0, 8.4],
  [6.6, 14.0, 8.4],
]; // [algo][proto], µs
const HW_LAT = [
  [
    [0.6, 1.25, 4.0],
    [0.6, 1.9, 3.4],
  ], // NVLink
  [
    [1.0, 1.9, 4.0],
    [1.0, 2.5, 5.7],
  ], // PCI
  [
    [5.0, 8.5, 14.0],
    [2.7, 4.0, 14.0],
  ], // NET
];
const LL_MAX_BWS = [
  [39.0, 39.0, 20.4],
  [87.7, 22.5, 19.0],
  [141.0, 45.0, 35.0],
  [282.0, 90.0, 70.0],
];
const PER_CH_RING_LL128 = [
  [20.0, 20.0, 20.0],
  [20.0, 20.0, 20.0],
  [36.7, 36.7, 36.7],
  [40.0, 40.0, 40.0],
];
const PER_CH_TREE_LL128 = [
  [20.0, 20.0, 20.0],
  [20.0, 20.0, 20.0],
  [36.7, 36.7, 29.0],
  [55.6, 31.67, 20.0],
];
const PER_CH_TREE = [
  [26.5, 18.5, 10.0],
  [24.0, 23.6, 17.8],
  [38.7, 41.4, 36.0],
  [70.0, 42.8, 24.0],
];
// [proto][log2(bytes >> 6)], 64 B .. 256 MB
const TREE_CORRECTION = [
  [1, 1, 1, 1, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1, 1, 1],
  [
    0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9,
    0.9,
  ],
];
const N_CHANNELS = [2, 8, 16, 32];
const NVLINK_BW = [120.0, 240.0, 370.0, 720.0];
const INTER_BW = [12.0, 25.0, 50.0, 50.0];
const PCIE_INTRA_BW = 24.0;

type Interconnect = 'nvlink' | 'ib_ndr' | 'ib_hdr' | 'pcie';

/** torch detect_interconnect: NVLink (or PCIe) inside a node, IB across nodes (NDR from Hopper on). */
function interconnect(groupSize: number, topo: Nccl213Topology): Interconnect {
  if (Math.ceil(groupSize / topo.gpusPerNode) === 1) return topo.nvlink ? 'nvlink' : 'pcie';
  return GPU[topo.gpuType] >= GPU.hopper ? 'ib_ndr' : 'ib_hdr';
}

const log2i = (n: number): number => (n <= 1 ? 0 : Math.floor(Math.log2(n)));

/** torch _nccl_algo_time: µs for one (algorithm, protocol), or −1 where the pair is disabled. */
function algoTimeUs(
  bytes: number,
  n: number,
  coll: CollectiveKind,
  algo: number,
  proto: number,
  topo: Nccl213Topology,
): number {
  const nNodes = Math.ceil(n / topo.gpusPerNode);
  const g = GPU[topo.gpuType];
  const index2 = nNodes <= 2 ? nNodes - 1 : 2;
  const ic = interconnect(n, topo);
  const isIb = ic === 'ib_ndr' || ic === 'ib_hdr';
  if (proto === LL128 && (nNodes > 2 || (nNodes > 1 && isIb))) return -1;
  const bwIntra = topo.intraNodeBwGBs ?? (topo.nvlink ? NVLINK_BW[g] : PCIE_INTRA_BW);
  const bwInter = topo.interNodeBwGBs ?? INTER_BW[g];
  let bw = nNodes === 1 ? bwIntra : isIb ? bwInter : nNodes <= 2 ? bwIntra : bwInter;
  if (isIb && nNodes > 1) {
    bw *= 0.77 + 0.23 * Math.min(1, (nNodes - 1) / 7); // NIC efficiency
    if (nNodes > 2) bw *= (Math.max(bytes, 50_000_000) / 50_000_000) ** 0.17; // multi-rail
  }
  const ch = N_CHANNELS[g];
  const llMax = LL_MAX_BWS[nNodes === 1 ? g : 0][index2];
  let busBw = bw;
  if (algo === RING && proto === LL) busBw = Math.min(llMax, bw * 0.5);
  else if (algo === RING && proto === LL128) busBw = Math.min(bw * (120 / 128), ch * PER_CH_RING_LL128[g][index2]);
  else if (algo === TREE && proto === LL) busBw = Math.min(bw / 3.8, llMax);
  else if (algo === TREE && proto === LL128)
    busBw = Math.min(bw * (nNodes === 1 ? 7 / 9 : 120 / 128), ch * PER_CH_TREE_LL128[g][index2]);
  else if (algo === TREE && proto === SIMPLE && coll === 'all_reduce')
    busBw = Math.min(bw * 0.92, ch * PER_CH_TREE[g][index2]);
  if (busBw <= 0) return -1;
  const nSteps = ringSteps(coll, n);
  let bandwidth = algo === RING ? (busBw * n) / nSteps : busBw * 0.5;
  if (bandwidth <= 0) return -1;
  let lat = BASE_LAT[algo][proto];
  const netOverhead = nNodes > 1 ? (proto === SIMPLE ? 3 : 1) : 0;
  const intraLat = Math.max(HW_LAT[ic === 'pcie' ? 1 : 0][algo][proto], netOverhead);
  const interLat = HW_LAT[2][algo][proto];
  if (algo === RING) {
    const nInter = nNodes === 1 ? 0 : coll === 'all_reduce' ? 2 * (nNodes - 1) : nNodes - 1;
    lat += (nSteps - nInter) * intraLat + nInter * interLat;
  } else if (coll === 'all_reduce') {
    lat += 2 * ((Math.floor(n / Math.max(nNodes, 1)) - 1) * intraLat + log2i(nNodes) * interLat);
  }
  if (algo === TREE && coll === 'all_reduce') {
    const logSize = bytes >= 64 ? log2i(Math.floor(bytes / 64)) : 0;
    if (logSize < 24) bandwidth *= TREE_CORRECTION[proto][logSize];
  }
  return lat + bytes / (1000 * bandwidth);
}

/**
 * torch estimate_nccl_collective_runtime_impl (2.13), ms: the fastest modelled (algorithm,
 * protocol). `torchSizeBytes` is torch's size of an FX collective: its inputs' bytes plus its
 * output's (an `out=` buffer not counted twice).
 */
export function nccl213CollectiveMs(
  torchSizeBytes: number,
  groupSize: number,
  coll: CollectiveKind,
  topo: Nccl213Topology = NCCL_213_DEFAULT_TOPOLOGY,
): number {
  if (groupSize <= 1) return 0;
  let best = Infinity;
  for (const algo of [TREE, RING]) {
    if (algo === TREE && coll !== 'all_reduce') continue;
    for (const proto of [LL, LL128, SIMPLE]) {
      const t = algoTimeUs(torchSizeBytes, groupSize, coll, algo, proto, topo);
      if (t >= 0 && t < best) best = t;
    }
  }
  return best === Infinity ? 0 : best / 1000;
}

// bus GB/s, µs per ring step, base µs, floor bytes (torch INTERCONNECT_PROFILES, empirical)
const PROFILES: Readonly<Record<string, readonly [number, number, number, number]>> = {
  nvlink_hopper: [36.0, 40.0, 10.0, 0],
  nvlink_ampere: [22.0, 45.0, 10.0, 0],
  nvlink_blackwell: [60.0, 30.0, 10.0, 0],
  nvlink_volta: [14.0, 50.0, 10.0, 0],
  ib_ndr: [22.0, 12.0, 30.0, 100 * 2 ** 20],
  ib_hdr: [11.0, 14.0, 30.0, 75 * 2 ** 20],
  pcie: [10.0, 60.0, 15.0, 0],
};

/** torch compute_min_saturation_bytes: bytes at which a collective reaches `efficiency` of its bus bandwidth. */
export function minSaturationBytes(
  groupSize: number,
  coll: CollectiveKind,
  topo: Nccl213Topology = NCCL_213_DEFAULT_TOPOLOGY,
  efficiency = 0.9,
): number {
  if (groupSize <= 1) return 0;
  const ic = interconnect(groupSize, topo);
  const [busGBs, hopUs, baseUs, floor] = PROFILES[ic === 'nvlink' ? `nvlink_${topo.gpuType}` : ic];
  const nSteps = ringSteps(coll, groupSize);
  const latencyS = (baseUs + nSteps * hopUs) * 1e-6;
  const bytes = Math.trunc((efficiency / (1 - efficiency)) * latencyS * busGBs * 1e9);
  return Math.max(bytes, floor);
}
