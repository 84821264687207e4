// Domination indices (torch OverlapScheduler._calculate_domination_index): compute nodes are
// numbered 0, 1, 2, ... in topological order; every node gets the smallest compute index it
// (transitively) feeds, or OFF_PATH when it feeds none (backward reduce-scatters, optimizer).
// The same pass over reduce-scatters tells which nodes block one (off-path queue priority).
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_scheduling.py

import type { GraphIndex } from '../graph_index';

/** Stands for torch's sys.maxsize: the node blocks no compute. */
export const OFF_PATH = 0x7fffffff;

export interface Domination {
  /** Smallest compute index each node feeds (itself for compute nodes), or OFF_PATH. */
  readonly computeDom: Int32Array;
  /** Compute index of each compute node (-1 for others). */
  readonly computeIndex: Int32Array;
  /** Compute nodes in order. */
  readonly computeNodes: Int32Array;
  /** 1 when the node is, or transitively feeds, a reduce-scatter. */
  readonly dominatesRs: Uint8Array;
}

export function computeDomination(index: GraphIndex): Domination {
  const { n, succOff, succIdx, isCompute, nodes } = index;
  const computeIndex = new Int32Array(n).fill(-1);
  const list: number[] = [];
  for (let i = 0; i < n; i++) if (isCompute[i]) computeIndex[i] = list.push(i) - 1;
  const computeDom = new Int32Array(n);
  const dominatesRs = new Uint8Array(n);
  // nodes are in topological order, so a reverse sweep sees every user first
  for (let i = n - 1; i >= 0; i--) {
    let d = OFF_PATH;
    let rs = nodes[i].kind === 'reduce_scatter' ? 1 : 0;
    for (let k = succOff[i]; k < succOff[i + 1]; k++) {
      const s = succIdx[k];
      if (computeDom[s] < d) d = computeDom[s];
      rs |= dominatesRs[s];
    }
    computeDom[i] = isCompute[i] ? computeIndex[i] : d;
    dominatesRs[i] = rs;
  }
  return { computeDom, computeIndex, computeNodes: Int32Array.from(list), dominatesRs };
}
