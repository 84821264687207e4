// Direct collectives over the data SAB (DESIGN.md § Runtime). Rank q owns the region
// [q·n·M, (q+1)·n·M) (M = maxElemsPerRank). Callers have already passed the entry barrier, so no
// rank is still reading the previous collective's data.
//   all_gather:     write my shard to my region, barrier, read every region's shard (rank-major).
//   reduce_scatter: write my full input (n chunks), barrier, sum chunk r over regions q = 0..n−1
//                   IN RANK ORDER in f32: out[j] = (((x0 + x1) + x2) + …). The order never depends
//                   on bucketing, so a bucket is bit-identical to its members reduced one by one.

import type { ControlSync } from './sync';
import type { ReduceOp } from './types';

export interface DataView32 {
  readonly data: Float32Array; // whole data SAB
  readonly regionElems: number; // n·M
}

export function directAllGather(
  v: DataView32, sync: ControlSync, input: Float32Array, output: Float32Array, where: string, seq: number,
): void {
  const n = sync.layout.worldSize;
  const c = input.length;
  v.data.set(input, sync.rank * v.regionElems);
  sync.barrier(where, seq);
  for (let q = 0; q < n; q++) {
    const src = q * v.regionElems;
    output.set(v.data.subarray(src, src + c), q * c);
  }
}

export function directReduceScatter(
  v: DataView32, sync: ControlSync, input: Float32Array, output: Float32Array, op: ReduceOp, where: string, seq: number,
): void {
  const n = sync.layout.worldSize;
  const c = output.length;
  const r = sync.rank;
  v.data.set(input, r * v.regionElems);
  sync.barrier(where, seq);
  const d = v.data;
  const stride = v.regionElems;
  const first = r * c; // rank 0's copy of chunk r
  const avg = op === 'avg';
  for (let j = 0; j < c; j++) {
    let acc = d[first + j];
    // fround(a + b) of two f32 values is exactly one f32 addition; j-outer keeps one store per element.
    for (let q = 1, at = first + j + stride; q < n; q++, at += stride) acc = Math.fround(acc + d[at]);
    output[j] = avg ? acc / n : acc; // the store rounds the quotient to f32
  }
}
