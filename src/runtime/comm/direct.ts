// Direct collectives over the data SAB (docs/ARCHITECTURE.md §6). Each rank writes its part BEFORE the
// collective's single barrier (RankComm makes sure nobody still reads that area), then reads after
// it. n = 1 never touches the SAB. Where the data goes is a Placement:
//   latency path:   a reduce-scatter whose footprint (n·n·c) fits LATENCY_AREA_BYTES (layout.ts) uses
//                   one of two latency areas by seq parity, after the rank regions: the previous
//                   collective used the other one (or the regions), so it never waits before writing.
//                   (All-gathers already alternate between two gather areas; a same-run A/B on 2
//                   cores showed no gain from moving them, so they stay.)
//   all_gather:     two gather areas by seq parity, [p·n·M, (p+1)·n·M) (gathered sizes over
//                   AG_PARITY_MAX_BYTES use area 0 only, after a done wait). Rank q writes its shard
//                   at q·c; once arrived, a rank copies its own shard from its input and the shards
//                   of ranks already arrived, then after the barrier the rest, each run of
//                   consecutive ranks with one set.
//   reduce_scatter: else rank q owns [q·n·M, (q+1)·n·M). Rank q writes every chunk of its input but
//                   chunk q (which only it reads); rank r sums chunk r over q = 0..n−1 IN RANK ORDER
//                   in f32, out[j] = (((x0 + x1) + x2) + …), taking its own chunk from its input. It
//                   folds the ranks that have already arrived while the others still write, the rest
//                   after the barrier: the same additions in the same order. The order never depends
//                   on bucketing, so a bucket is bit-identical to its members one by one.

import { foldInRankOrder } from './sum_f32';
import type { ReduceOp } from './comm_types';

/**
 * Gathered sizes up to this use the two gather areas by seq parity (no wait before writing: small
 * collectives are bound by wake-ups). Larger ones always use area 0 after a done wait (one more
 * wake-up is nothing next to their copies, and the copies keep half the SAB working set).
 */
export const AG_PARITY_MAX_BYTES = 32 * 2 ** 20;

export interface DataView32 {
  readonly data: Float32Array; // whole data SAB
  readonly regionElems: number; // n·M
  readonly latencyBase: number; // element offset of latency area 0 (area 1 follows it)
  readonly latencyElems: number; // elements of one latency area
}

/**
 * Where a collective's data lives: rank q's part starts at base + q·stride. `reads` names what
 * readers of it may still touch when the next collective starts: a gather area, all regions, or
 * only a latency area (which the next collective, of the other parity, never writes).
 */
export interface Placement {
  readonly base: number;
  readonly stride: number;
  readonly reads: 0 | 1 | 'all' | 'latency';
}

/** Where `kind` with c elements per rank chunk (all-gather: the shard; reduce-scatter: the output) goes at `seq`. */
export function placement(
  v: DataView32,
  kind: 'all_gather' | 'reduce_scatter',
  n: number,
  c: number,
  seq: number,
): Placement {
  if (kind === 'reduce_scatter') {
    if (n * n * c <= v.latencyElems)
      return { base: v.latencyBase + (seq & 1) * v.latencyElems, stride: n * c, reads: 'latency' };
    return { base: 0, stride: v.regionElems, reads: 'all' };
  }
  const area = n * c * 4 <= AG_PARITY_MAX_BYTES ? ((seq & 1) as 0 | 1) : 0;
  return { base: area * v.regionElems, stride: c, reads: area };
}

/** Before the barrier: publish this rank's shard. */
export function directAllGatherWrite(v: DataView32, n: number, rank: number, at: Placement, input: Float32Array): void {
  if (n === 1) return;
  v.data.set(input, at.base + rank * at.stride);
}

/**
 * After arriving, before the barrier completes: the own shard from the input, then every shard whose
 * rank has already arrived (its data is written; a mismatched descriptor only makes this output
 * garbage, and the collective throws after the barrier anyway). Marks what it copied in `copied`.
 */
export function directAllGatherEarly(
  v: DataView32,
  n: number,
  rank: number,
  at: Placement,
  input: Float32Array,
  output: Float32Array,
  copied: Uint8Array,
  arrived: (q: number) => boolean,
): void {
  const c = input.length;
  output.set(input, rank * c);
  copied.fill(0, 0, n);
  copied[rank] = 1;
  for (let q = 0; q < n; q++) {
    if (q === rank || !arrived(q)) continue;
    output.set(v.data.subarray(at.base + q * at.stride, at.base + q * at.stride + c), q * c);
    copied[q] = 1;
  }
}

/** After the barrier: the shards not copied yet, each run of consecutive ranks with one set. */
export function directAllGatherRest(
  v: DataView32,
  n: number,
  at: Placement,
  c: number,
  output: Float32Array,
  copied: Uint8Array,
): void {
  for (let q = 0; q < n; ) {
    if (copied[q]) {
      q++;
      continue;
    }
    let end = q + 1;
    while (end < n && !copied[end]) end++;
    output.set(v.data.subarray(at.base + q * at.stride, at.base + (end - 1) * at.stride + c), q * c);
    q = end;
  }
}

/** Before the barrier: publish every chunk of the input but this rank's own. */
export function directReduceScatterWrite(
  v: DataView32,
  n: number,
  rank: number,
  at: Placement,
  input: Float32Array,
): void {
  if (n === 1) return;
  const c = input.length / n;
  const region = at.base + rank * at.stride;
  if (rank > 0) v.data.set(input.subarray(0, rank * c), region);
  if (rank < n - 1) v.data.set(input.subarray((rank + 1) * c), region + (rank + 1) * c);
}

/** Chunk `rank` of every rank's input, in rank order: the own one from `input`, the others from the SAB. */
export function reduceScatterSources(
  v: DataView32,
  n: number,
  rank: number,
  at: Placement,
  input: Float32Array,
  c: number,
): Float32Array[] {
  const sources: Float32Array[] = [];
  for (let q = 0; q < n; q++) {
    const from = q === rank ? input : v.data;
    const start = q === rank ? rank * c : at.base + q * at.stride + rank * c;
    sources.push(from.subarray(start, start + c));
  }
  return sources;
}

/**
 * After arriving, before the barrier completes: folds the sources of the longest prefix of ranks
 * that have arrived (this rank counts as arrived) into `output`. Returns how many it folded.
 */
export function directReduceScatterEarly(
  sources: readonly Float32Array[],
  rank: number,
  output: Float32Array,
  arrived: (q: number) => boolean,
): number {
  let k = 0;
  while (k < sources.length && (k === rank || arrived(k))) k++;
  if (k < 2) return 0; // nothing worth folding yet: the whole sum runs after the barrier
  foldInRankOrder(sources, output, 0, k, 1);
  return k;
}

/** After the barrier: folds sources[folded..n) into `output` (rank order, f32), ÷ n for avg. */
export function directReduceScatterRest(
  sources: readonly Float32Array[],
  folded: number,
  output: Float32Array,
  op: ReduceOp,
): void {
  const n = sources.length;
  foldInRankOrder(sources, output, folded, n, op === 'avg' ? n : 1);
}
