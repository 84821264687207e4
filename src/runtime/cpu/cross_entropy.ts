// CPU reference cross-entropy loss and its backward (the spec for shaders/cross_entropy.wgsl);
// follows llm.c crossentropy_forward / crossentropy_softmax_backward.
// loss = mean_t (logsumexp(logits[t,:]) − logits[t, target_t]);  dLogits = (softmax − onehot)/T.
import { ConfigError } from '../../errors';
import type { CrossEntropyDims } from './attrs';
import type { FArr, IArr } from './cpu_types';

function targetAt(targets: IArr, t: number, V: number): number {
  const y = targets[t];
  if (y < 0 || y >= V) throw new ConfigError(`targets[${t}]`, `targets[${t}] must be in [0, ${V}), got ${y}`);
  return y;
}

/** logsumexp of row t, max-shifted. */
function rowLse(logits: FArr, t: number, V: number): number {
  let mx = -Infinity;
  for (let v = 0; v < V; v++) mx = Math.max(mx, logits[t * V + v]);
  let s = 0;
  for (let v = 0; v < V; v++) s += Math.exp(logits[t * V + v] - mx);
  return mx + Math.log(s);
}

export function crossEntropy(logits: FArr, targets: IArr, loss: FArr, d: CrossEntropyDims): void {
  let total = 0;
  for (let t = 0; t < d.T; t++) total += rowLse(logits, t, d.V) - logits[t * d.V + targetAt(targets, t, d.V)];
  loss[0] = total / d.T;
}

export function crossEntropyBwd(logits: FArr, targets: IArr, dLogits: FArr, d: CrossEntropyDims): void {
  for (let t = 0; t < d.T; t++) {
    const lse = rowLse(logits, t, d.V);
    const y = targetAt(targets, t, d.V);
    for (let v = 0; v < d.V; v++) {
      const p = Math.exp(logits[t * d.V + v] - lse);
      dLogits[t * d.V + v] = (p - (v === y ? 1 : 0)) / d.T;
    }
  }
}
