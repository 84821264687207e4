// Host-side MoE index building (integers, shared by the CPU and WebGPU paths: the counts leave the
// device anyway, to be exchanged between expert ranks): a stable counting sort of the (token, pick)
// assignments by expert, and the regrouping of rows an all-to-all delivered.
import { ConfigError } from '../../errors';
import { checkMoeIndex } from './moe_checks';

/** Assignments sorted by expert, token order kept within an expert. */
export interface ExpertOrder {
  readonly counts: Int32Array; // [E] rows per expert
  readonly offsets: Int32Array; // [E + 1] first row of each expert; offsets[E] = T·k
  readonly rowOf: Int32Array; // [T·k] the token of each expert-ordered row (gatherRows' index)
  readonly posOf: Int32Array; // [T·k] the expert-ordered row of assignment t·k + i (combineRows' index)
}

/** Stable counting sort of `experts` ([T, k] picks, each in [0, numExperts)) by expert. */
export function expertOrder(experts: Int32Array, tokens: number, topK: number, numExperts: number): ExpertOrder {
  const n = tokens * topK;
  checkMoeIndex('expertOrder.experts', experts, n, numExperts);
  const counts = new Int32Array(numExperts);
  for (let a = 0; a < n; a++) counts[experts[a]]++;
  const offsets = offsetsOf(counts);
  const next = offsets.slice(0, numExperts);
  const rowOf = new Int32Array(n);
  const posOf = new Int32Array(n);
  for (let a = 0; a < n; a++) {
    const p = next[experts[a]]++;
    rowOf[p] = Math.floor(a / topK);
    posOf[a] = p;
  }
  return { counts, offsets, rowOf, posOf };
}

/** [0, c0, c0 + c1, …]: the exclusive prefix sum, one longer than `counts`. */
export function offsetsOf(counts: ArrayLike<number>): Int32Array {
  const offsets = new Int32Array(counts.length + 1);
  for (let e = 0; e < counts.length; e++) offsets[e + 1] = offsets[e] + counts[e];
  return offsets;
}

/**
 * Rows received from `sources` ranks, each sending its rows for `local` experts in expert order
 * (counts[s·local + e]), regrouped expert-major: row i of the result is row index[i] of the received
 * buffer (gatherRows' index); its inverse (`back`) undoes it before the return all-to-all.
 */
export function sourceToExpertMajor(
  counts: Int32Array,
  sources: number,
  local: number,
): {
  readonly index: Int32Array;
  readonly back: Int32Array;
  readonly expertCounts: Int32Array;
} {
  if (counts.length !== sources * local) {
    throw new ConfigError(
      'counts',
      `counts must hold sources × local = ${sources * local} entries, got ${counts.length}`,
    );
  }
  const start = offsetsOf(counts); // received layout: source-major
  const total = start[sources * local];
  const index = new Int32Array(total);
  const back = new Int32Array(total);
  const expertCounts = new Int32Array(local);
  let i = 0;
  for (let e = 0; e < local; e++) {
    for (let s = 0; s < sources; s++) {
      const at = s * local + e;
      for (let r = start[at]; r < start[at + 1]; r++) {
        back[r] = i;
        index[i++] = r;
      }
      expertCounts[e] += counts[at];
    }
  }
  return { index, back, expertCounts };
}
