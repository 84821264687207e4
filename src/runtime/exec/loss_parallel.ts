// Cross-entropy on vocabulary-sharded logits (torchtitan's loss_parallel): each tp rank holds
// logits [T, V/tp] for its slice of the vocabulary, starting at `vocabStart`. The row maxima are
// all-gathered across tp, then the shifted exp-sums and the target logits (owned by one rank each)
// are all-reduced, so every rank gets the full log-sum-exp per row — the loss and its gradient
// equal the unsharded ones. The graph's cross_entropy nodes stand for this; the two small
// collectives (torchtitan issues them inside the loss too) run here, on the tp communicator.

import type { CollectiveRequest } from '../comm';
import type { ExecComm } from './collectives';

export interface ShardedLogits {
  readonly logits: Float32Array; // [T, V] (V: this rank's vocabulary slice)
  readonly targets: Int32Array; // [T], global token ids
  readonly T: number;
  readonly V: number;
  readonly vocabStart: number;
}

const req = (label: string): CollectiveRequest => ({ label, tensors: [label] });

/** Per-row log-sum-exp over the whole vocabulary, and the target logits, from every tp rank's slice. */
function rowStats(x: ShardedLogits, tp: ExecComm, label: string): { lse: Float64Array; target: Float64Array } {
  const { logits, targets, T, V, vocabStart } = x;
  const localMax = new Float32Array(T);
  for (let t = 0; t < T; t++) {
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, logits[t * V + v]);
    localMax[t] = m;
  }
  const maxes = new Float32Array(tp.worldSize * T);
  tp.allGather(req(`${label}.row_max`), localMax, maxes);
  const sums = new Float32Array(2 * T); // [Σ exp(logit − max) | target logit]
  const globalMax = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    let m = -Infinity;
    for (let r = 0; r < tp.worldSize; r++) m = Math.max(m, maxes[r * T + t]);
    globalMax[t] = m;
    let s = 0;
    for (let v = 0; v < V; v++) s += Math.exp(logits[t * V + v] - m);
    sums[t] = s;
    const y = targets[t] - vocabStart;
    sums[T + t] = y >= 0 && y < V ? logits[t * V + y] : 0;
  }
  const total = new Float32Array(2 * T);
  tp.allReduce(req(`${label}.sum_exp`), sums, total, 'sum');
  const lse = new Float64Array(T);
  for (let t = 0; t < T; t++) lse[t] = globalMax[t] + Math.log(total[t]);
  return { lse, target: Float64Array.from(total.subarray(T)) };
}

/** mean_t (logsumexp(logits[t, :]) − logits[t, y_t]) over the full vocabulary; `lse` is kept for the backward. */
export function shardedCrossEntropy(
  x: ShardedLogits,
  tp: ExecComm,
  label: string,
): { loss: number; lse: Float64Array } {
  const { lse, target } = rowStats(x, tp, label);
  let total = 0;
  for (let t = 0; t < x.T; t++) total += lse[t] - target[t];
  return { loss: total / x.T, lse };
}

/** This rank's slice of dLogits = (softmax − onehot) / T, from the forward's per-row log-sum-exp. */
export function shardedCrossEntropyBwd(x: ShardedLogits, lse: Float64Array): Float32Array {
  const { logits, targets, T, V, vocabStart } = x;
  const d = new Float32Array(T * V);
  for (let t = 0; t < T; t++) {
    const y = targets[t] - vocabStart;
    for (let v = 0; v < V; v++) d[t * V + v] = (Math.exp(logits[t * V + v] - lse[t]) - (v === y ? 1 : 0)) / T;
  }
  return d;
}
