// Ring collectives: n−1 neighbour steps; rank r writes only into its right neighbour's region
// (r+1 mod n) and waits only on its left neighbour's step counter (NCCL's ring, shared memory
// standing in for the link). Region slots are written once per collective, so no step overwrites
// data a neighbour has not read yet; the entry barrier guards reuse across collectives.
//
// Numerics (torchtitan #2042): reduce_scatter's chunk r is accumulated along the ring starting at
// rank r+1: ((x[r+1] + x[r+2]) + …) + x[r]. Only rank n−1's chunk matches the direct (rank-order)
// sum, so ring and direct results differ in the last bits. Here the order depends only on the
// destination rank, not on the message size, so bucketing does not change ring bits either
// (NCCL's channel/protocol choice by size is what makes bucketing change bits on GPUs).

import type { DataView32 } from './direct';
import type { ControlSync } from './sync';
import type { ReduceOp } from './comm_types';

const mod = (a: number, n: number): number => ((a % n) + n) % n;

/**
 * This rank's place on the ring: its left neighbour, its own and its right neighbour's region start, and the
 * posted-step base.
 */
function ringPlace(v: DataView32, sync: ControlSync) {
  const n = sync.layout.worldSize;
  const r = sync.rank;
  return {
    n,
    r,
    left: mod(r - 1, n),
    mine: r * v.regionElems,
    right: mod(r + 1, n) * v.regionElems,
    base: sync.ringPosted(r),
  };
}

/** Step k: send chunk (r−k) mod n (mine at k=0, else the one just received) to the right. */
export function ringAllGather(
  v: DataView32,
  sync: ControlSync,
  input: Float32Array,
  output: Float32Array,
  where: string,
  seq: number,
): void {
  const { n, r, left, mine, right, base } = ringPlace(v, sync);
  const c = input.length;
  for (let k = 0; k < n - 1; k++) {
    const chunk = mod(r - k, n);
    if (k === 0) {
      v.data.set(input, right + chunk * c);
    } else {
      sync.waitRing(left, base + k, `${where} ring step ${k}`, seq);
      const at = mine + chunk * c;
      v.data.copyWithin(right + chunk * c, at, at + c);
    }
    sync.postRingStep(base + k + 1);
  }
  sync.waitRing(left, base + n - 1, `${where} ring step ${n - 1}`, seq);
  for (let q = 0; q < n; q++) {
    if (q === r) output.set(input, r * c);
    else output.set(v.data.subarray(mine + q * c, mine + (q + 1) * c), q * c);
  }
}

/** Step k: send partial sum of chunk (r−k−1) mod n (my input at k=0, received + mine after). */
export function ringReduceScatter(
  v: DataView32,
  sync: ControlSync,
  input: Float32Array,
  output: Float32Array,
  op: ReduceOp,
  where: string,
  seq: number,
): void {
  const { n, r, left, mine, right, base } = ringPlace(v, sync);
  const c = output.length;
  const d = v.data;
  for (let k = 0; k < n - 1; k++) {
    const chunk = mod(r - k - 1, n);
    const dst = right + chunk * c;
    const own = chunk * c;
    if (k === 0) {
      d.set(input.subarray(own, own + c), dst);
    } else {
      sync.waitRing(left, base + k, `${where} ring step ${k}`, seq);
      const recv = mine + chunk * c;
      for (let j = 0; j < c; j++) d[dst + j] = d[recv + j] + input[own + j];
    }
    sync.postRingStep(base + k + 1);
  }
  const own = r * c;
  if (n === 1) {
    output.set(input.subarray(0, c));
  } else {
    sync.waitRing(left, base + n - 1, `${where} ring step ${n - 1}`, seq);
    const recv = mine + r * c;
    for (let j = 0; j < c; j++) output[j] = d[recv + j] + input[own + j];
  }
  if (op === 'avg') for (let j = 0; j < c; j++) output[j] /= n;
}
