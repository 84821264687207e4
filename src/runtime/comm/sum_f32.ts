// Rank-order f32 sum of n equal-length sources into `out`: out[j] = (((s0[j] + s1[j]) + s2[j]) + …),
// one f32 rounding per addition (Math.fround / Float32Array stores), optionally ÷ divisor. Done in
// blocks of BLOCK elements so `out` stays in L1 while each source streams through once, with up to
// three sources folded per pass over the block (fewer loads and stores of `out`). The fold can be
// resumed: part of the ranks now, the rest later, bit-identical to one pass.

/** Elements per block (16 KB of f32). */
export const SUM_BLOCK = 4096;

function sum2(o: Float32Array, a: Float32Array, b: Float32Array, s: number, e: number): void {
  for (let j = s; j < e; j++) o[j] = Math.fround(a[j] + b[j]);
}

function add3(o: Float32Array, a: Float32Array, b: Float32Array, c: Float32Array, s: number, e: number): void {
  for (let j = s; j < e; j++) o[j] = Math.fround(Math.fround(Math.fround(o[j] + a[j]) + b[j]) + c[j]);
}

function add1(o: Float32Array, a: Float32Array, s: number, e: number): void {
  for (let j = s; j < e; j++) o[j] += a[j]; // the store rounds the f64 sum of two f32 to f32: one f32 add
}

function divide(o: Float32Array, d: number, s: number, e: number): void {
  for (let j = s; j < e; j++) o[j] /= d; // f32 value / d, rounded once by the store
}

export function sumInRankOrder(sources: readonly Float32Array[], out: Float32Array, divisor: number): void {
  foldInRankOrder(sources, out, 0, sources.length, divisor);
}

/**
 * Folds sources[from..to) into `out` in rank order: with from = 0 `out` starts as s0 (+ s1), else it
 * already holds the rank-order sum of sources[0..from). Then ÷ divisor (pass 1 until the last fold).
 * Folding in several calls gives the same bits as one: every step is the same f32 addition. The
 * direct reduce-scatter folds the ranks that have already arrived while the others still write.
 */
export function foldInRankOrder(
  sources: readonly Float32Array[],
  out: Float32Array,
  from: number,
  to: number,
  divisor: number,
): void {
  const c = out.length;
  if (from === 0 && to === 1) out.set(sources[0]);
  for (let s = 0; s < c; s += SUM_BLOCK) {
    const e = Math.min(c, s + SUM_BLOCK);
    let q = from;
    if (q === 0 && to >= 2) {
      sum2(out, sources[0], sources[1], s, e);
      q = 2;
    }
    if (q > 0) {
      for (; q + 3 <= to; q += 3) add3(out, sources[q], sources[q + 1], sources[q + 2], s, e);
      for (; q < to; q++) add1(out, sources[q], s, e);
    }
    if (divisor !== 1) divide(out, divisor, s, e);
  }
}
