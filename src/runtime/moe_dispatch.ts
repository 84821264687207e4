// Expert-parallel token exchange for one MoE layer (torchtitan's token dispatch, on the SAB
// all-to-all): the ranks of `comm` each hold experts/worldSize experts, [r·L, (r+1)·L). A rank
// sorts its token picks by global expert (so rows bound for rank r are contiguous), exchanges the
// per-expert counts, sends the rows, and regroups what arrives from source-major to expert-major so
// each local expert's rows are contiguous — in global token order (source rank, then token), which
// is the order one rank holding every expert would see them in.

import type { RankCommApi } from './comm';
import { expertOrder, offsetsOf, sourceToExpertMajor, type ExpertOrder } from './cpu';

export type MoeComm = Pick<RankCommApi, 'worldSize' | 'allToAll'>;

/** Everything both directions of the exchange need, forward and backward alike. */
export interface DispatchPlan {
  readonly order: ExpertOrder; // this rank's picks sorted by global expert
  readonly sendRows: readonly number[]; // rows to each rank
  readonly recvRows: readonly number[]; // rows from each rank
  readonly toExpertMajor: Int32Array; // gatherRows index: received (source-major) → local-expert-major
  readonly toSourceMajor: Int32Array; // its inverse, before the rows go back
  readonly localOffsets: Int32Array; // [L + 1] row range of each local expert, expert-major
  readonly localRows: number;
}

/** Rows per rank from per-expert counts: sums of `local` consecutive counts. */
function rowsPerRank(counts: ArrayLike<number>, ranks: number, local: number): number[] {
  return Array.from({ length: ranks }, (_, r) => {
    let s = 0;
    for (let e = r * local; e < (r + 1) * local; e++) s += counts[e];
    return s;
  });
}

/** Sorts this rank's picks ([T, k] global expert ids) and exchanges the counts (one small all-to-all). */
export function planDispatch(
  comm: MoeComm,
  experts: Int32Array,
  tokens: number,
  topK: number,
  numExperts: number,
  label: string,
): DispatchPlan {
  const order = expertOrder(experts, tokens, topK, numExperts);
  return dispatchPlanOf(order, exchangeCounts(comm, order.counts, label), comm.worldSize);
}

/** This rank's per-expert counts out, [source rank, local expert] counts in (torchtitan's count all-to-all). */
export function exchangeCounts(comm: MoeComm, counts: Int32Array, label: string): Int32Array {
  const local = counts.length / comm.worldSize;
  const recv = new Float32Array(counts.length); // [source, local expert]
  const split = new Array<number>(comm.worldSize).fill(local);
  // exact: counts stay far below 2^24
  const request = { label: `${label} counts`, tensors: [`${label}.counts`] };
  comm.allToAll(request, Float32Array.from(counts), recv, split, split);
  return Int32Array.from(recv);
}

/** The plan from this rank's sorted picks and the counts the other ranks sent it. */
export function dispatchPlanOf(order: ExpertOrder, recvCounts: Int32Array, ranks: number): DispatchPlan {
  const local = order.counts.length / ranks;
  const regroup = sourceToExpertMajor(recvCounts, ranks, local);
  return {
    order,
    sendRows: rowsPerRank(order.counts, ranks, local),
    recvRows: rowsPerRank(recvCounts, ranks, local),
    toExpertMajor: regroup.index,
    toSourceMajor: regroup.back,
    localOffsets: offsetsOf(regroup.expertCounts),
    localRows: regroup.index.length,
  };
}

/**
 * Sends `rows` ([*, cols]) along the plan: 'dispatch' from token ranks to expert ranks (this rank's
 * expert-ordered rows out, source-major rows in), 'combine' back the other way.
 */
export function exchangeRows(
  comm: MoeComm,
  plan: DispatchPlan,
  rows: Float32Array,
  cols: number,
  direction: 'dispatch' | 'combine',
  label: string,
): Float32Array {
  const [send, recv] = direction === 'dispatch' ? [plan.sendRows, plan.recvRows] : [plan.recvRows, plan.sendRows];
  const sendSplits = send.map((r) => r * cols);
  const recvSplits = recv.map((r) => r * cols);
  const received = new Float32Array(recvSplits.reduce((a, b) => a + b, 0));
  comm.allToAll({ label: `${label} ${direction}`, tensors: [`${label}.rows`] }, rows, received, sendSplits, recvSplits);
  return received;
}
