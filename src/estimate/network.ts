// Network presets for collectives: α-β ring parameters inside and across nodes, or torch's
// analytical NCCL estimator. Sources: NVIDIA H100 SXM (NVLink 4, 900 GB/s bidirectional per GPU;
// nccl-tests all_gather bus bandwidth ~360 GB/s on 8×H100), NDR InfiniBand 400 Gb/s per GPU.

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
  if (!Object.hasOwn(NETWORK_PRESETS, name)) throw new ConfigError('network', oneOfMessage('network', NETWORK_NAMES, name));
  return NETWORK_PRESETS[name as NetworkName];
}
