// Network presets for collectives: α-β ring parameters inside and across nodes, or torch's
// analytical NCCL estimator. 'nvlink-ib' is the network torchtitan's published H100 runs used
// (torchtitan benchmarks/llama3_h100_202412_torchtitan.md: 8 GPUs per host fully connected by
// NVLink, hosts on a backend RDMA network at 400 Gb/s per GPU). Sources for its constants:
//  - NVLink 4 (H100 SXM: 900 GB/s bidirectional per GPU): nccl-tests all_gather_perf /
//    reduce_scatter_perf on 8×H100 reach ~360 GB/s bus bandwidth at ≥ 256 MB, about half of it
//    near 8 MB and ~20-30 µs for a 1 MB all-gather (nccl-tests doc/PERFORMANCE.md defines
//    busbw = algbw·(n−1)/n for both);
//  - 400 Gb/s per GPU (50 GB/s line rate; NDR InfiniBand or RoCE): a ring that leaves the node
//    runs at one NIC's pace per GPU; nccl-tests multi-node all_gather / reduce_scatter reach ~90 %
//    of line rate (45 GB/s) at large sizes, half of it near 16 MB.
// Achieved bus bandwidth grows with the message: β(S) = β·S / (S + S½), S the collective's size
// (gathered output / reduce-scatter input), on top of the per-step latency α.

import { ConfigError, oneOfMessage } from '../errors';

export type NetworkName = 'nvlink-ib' | 'nccl-analytical' | 'pcie-ethernet';

export interface RingNetwork {
  readonly kind: 'ring';
  readonly name: string;
  readonly gpusPerNode: number;
  /** Per-step latency inside a node, µs. */
  readonly alphaIntraUs: number;
  /** Achieved ring bus bandwidth inside a node, bytes/s. */
  readonly betaIntraBytesPerS: number;
  /** Per-step latency when the ring crosses nodes, µs. */
  readonly alphaInterUs: number;
  /** Achieved bus bandwidth per GPU across nodes, bytes/s (the slowest link sets the ring's pace). */
  readonly betaInterBytesPerS: number;
  /** Message size at which the achieved bus bandwidth inside a node is half of β, bytes (absent: β at every size). */
  readonly halfBwIntraBytes?: number;
  /** The same across nodes, bytes. */
  readonly halfBwInterBytes?: number;
}

/** torch 2.11 comm_analysis.estimate_nccl_collective_runtime_impl with its config defaults. */
export interface NcclAnalyticalNetwork {
  readonly kind: 'nccl-analytical';
  readonly name: string;
  readonly gpusPerNode: number; // torch hard-codes 8
  /** torch._inductor.config.intra_node_bw, GB/s per channel (default 300). */
  readonly intraNodeBwGBs: number;
  /** torch._inductor.config.inter_node_bw, GB/s per channel (default 25). */
  readonly interNodeBwGBs: number;
}

export type NetworkPreset = RingNetwork | NcclAnalyticalNetwork;

const GB = 1e9;
const MB = 1e6;

export const NETWORK_PRESETS: Readonly<Record<NetworkName, NetworkPreset>> = {
  // 8 GPUs on NVLink 4 per node, one 400 Gb/s NDR NIC per GPU across nodes
  'nvlink-ib': {
    kind: 'ring',
    name: 'nvlink-ib',
    gpusPerNode: 8,
    alphaIntraUs: 1, // NCCL ring step over NVLink ~0.6 µs + kernel overhead
    betaIntraBytesPerS: 360 * GB,
    alphaInterUs: 4, // IB step incl. proxy thread
    betaInterBytesPerS: 45 * GB, // 400 Gb/s = 50 GB/s line rate, ~90 % achieved
    halfBwIntraBytes: 8 * MB,
    halfBwInterBytes: 16 * MB,
  },
  'nccl-analytical': {
    kind: 'nccl-analytical',
    name: 'nccl-analytical',
    gpusPerNode: 8,
    intraNodeBwGBs: 300,
    interNodeBwGBs: 25,
  },
  // a commodity cluster: PCIe 4 x16 inside a node, 100 GbE across (comm-bound: shows exposure)
  'pcie-ethernet': {
    kind: 'ring',
    name: 'pcie-ethernet',
    gpusPerNode: 8,
    alphaIntraUs: 5,
    betaIntraBytesPerS: 20 * GB,
    alphaInterUs: 15,
    betaInterBytesPerS: 10 * GB,
  },
};

export const NETWORK_NAMES = Object.keys(NETWORK_PRESETS) as NetworkName[];

export function getNetwork(name: string): NetworkPreset {
  if (!Object.hasOwn(NETWORK_PRESETS, name))
    throw new ConfigError('network', oneOfMessage('network', NETWORK_NAMES, name));
  return NETWORK_PRESETS[name as NetworkName];
}
