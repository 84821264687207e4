// Direct collectives over the data SAB (DESIGN.md § Runtime). Each rank writes its part BEFORE the
// collective's single barrier (RankComm.publish makes sure nobody still reads that area), then reads
// after it. n = 1 never touches the SAB.
//   all_gather:     two gather areas by seq parity, [p·n·M, (p+1)·n·M): rank q writes its shard at
//                   q·c of area p; once arrived, a rank copies its own shard from its input and the
//                   shards of ranks already arrived, then after the barrier the rest, each run of
//                   consecutive ranks with one set (gathered sizes over AG_PARITY_MAX_BYTES use
//                   area 0 only, after a done wait). Parity lets
//                   a fast rank write seq s+1 while a slow one still reads s (barrier s+1 orders s+2).
//   reduce_scatter: rank q owns [q·n·M, (q+1)·n·M) and writes every chunk of its input but chunk q
//                   (which only it reads); rank r sums chunk r over q = 0..n−1 IN RANK ORDER in f32,
//                   out[j] = (((x0 + x1) + x2) + …), taking its own chunk from its input. The order
//                   never depends on bucketing, so a bucket is bit-identical to its members one by one.

import { sumInRankOrder } from './sum_f32';
import type { ReduceOp } from './types';

/**
 * Gathered sizes up to this use the two gather areas by seq parity (no wait before writing: small
 * collectives are bound by wake-ups). Larger ones always use area 0 after a done wait (one more
 * wake-up is nothing next to their copies, and the copies keep half the SAB working set).
 */
export const AG_PARITY_MAX_BYTES = 32 * 2 ** 20;

/** Gather area of an all-gather of `c` elems per shard over n ranks at `seq`. */
export function gatherArea(n: number, c: number, seq: number): 0 | 1 {
  return n * c * 4 <= AG_PARITY_MAX_BYTES ? ((seq & 1) as 0 | 1) : 0;
}

export interface DataView32 {
  readonly data: Float32Array; // whole data SAB
  readonly regionElems: number; // n·M
}

/** Before the barrier: publish this rank's shard into the gather area of `seq`'s parity. */
export function directAllGatherWrite(v: DataView32, n: number, rank: number, area: 0 | 1, input: Float32Array): void {
  if (n === 1) return;
  v.data.set(input, area * v.regionElems + rank * input.length);
}

/**
 * After arriving, before the barrier completes: the own shard from the input, then every shard whose
 * rank has already arrived (its data is written; a mismatched descriptor only makes this output
 * garbage, and the collective throws after the barrier anyway). Marks what it copied in `copied`.
 */
export function directAllGatherEarly(
  v: DataView32, n: number, rank: number, area: 0 | 1, input: Float32Array, output: Float32Array,
  copied: Uint8Array, arrived: (q: number) => boolean,
): void {
  const c = input.length;
  const at = area * v.regionElems;
  output.set(input, rank * c);
  copied.fill(0, 0, n);
  copied[rank] = 1;
  for (let q = 0; q < n; q++) {
    if (q === rank || !arrived(q)) continue;
    output.set(v.data.subarray(at + q * c, at + (q + 1) * c), q * c);
    copied[q] = 1;
  }
}

/** After the barrier: the shards not copied yet, each run of consecutive ranks with one set. */
export function directAllGatherRest(
  v: DataView32, n: number, area: 0 | 1, c: number, output: Float32Array, copied: Uint8Array,
): void {
  const at = area * v.regionElems;
  for (let q = 0; q < n;) {
    if (copied[q]) { q++; continue; }
    let end = q + 1;
    while (end < n && !copied[end]) end++;
    output.set(v.data.subarray(at + q * c, at + end * c), q * c);
    q = end;
  }
}

/** Before the barrier: publish every chunk of the input but this rank's own into its region. */
export function directReduceScatterWrite(v: DataView32, n: number, rank: number, input: Float32Array): void {
  if (n === 1) return;
  const c = input.length / n;
  const region = rank * v.regionElems;
  if (rank > 0) v.data.set(input.subarray(0, rank * c), region);
  if (rank < n - 1) v.data.set(input.subarray((rank + 1) * c), region + (rank + 1) * c);
}

/** After the barrier: output = chunk `rank` summed over ranks 0..n−1 in rank order (f32), ÷ n for avg. */
export function directReduceScatterRead(
  v: DataView32, n: number, rank: number, input: Float32Array, output: Float32Array, op: ReduceOp,
): void {
  const c = output.length;
  const sources: Float32Array[] = [];
  for (let q = 0; q < n; q++) {
    if (q === rank) sources.push(input.subarray(rank * c, (rank + 1) * c));
    else {
      const at = q * v.regionElems + rank * c;
      sources.push(v.data.subarray(at, at + c));
    }
  }
  sumInRankOrder(sources, output, op === 'avg' ? n : 1);
}
