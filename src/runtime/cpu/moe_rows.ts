// CPU reference MoE row movement (the spec for shaders/moe_gather.wgsl and moe_combine.wgsl):
// the permutation of token rows into expert order (a gather by index), and its way back, a sum of
// each token's k expert rows — weighted by the gates (combine) or not (the gather's backward, a
// scatter-add written as a per-token gather so every sum runs in slot order, on the GPU too).
import type { FArr, IArr } from './cpu_types';
import { checkMoeIndex, checkMoeLength } from './moe_checks';

export interface GatherDims {
  readonly rows: number; // P: rows gathered
  readonly cols: number; // D
  readonly srcRows: number; // rows of src (bound of the index)
}

/** dst[p,:] = src[index[p],:] — dispatch in expert order (index = the token of each expert row). */
export function gatherRows(src: FArr, index: IArr, dst: FArr, d: GatherDims): void {
  checkMoeIndex('gatherRows.index', index, d.rows, d.srcRows);
  checkMoeLength('gatherRows.src', src, d.srcRows * d.cols);
  checkMoeLength('gatherRows.dst', dst, d.rows * d.cols);
  for (let p = 0; p < d.rows; p++) {
    const from = index[p] * d.cols;
    for (let j = 0; j < d.cols; j++) dst[p * d.cols + j] = src[from + j];
  }
}

export interface CombineDims {
  readonly tokens: number; // T
  readonly topK: number; // k
  readonly cols: number; // D
  readonly srcRows: number; // P: expert rows (bound of posOf)
}

/**
 * dst[t,:] = Σ_i w[t,i]·src[posOf[t,i],:], i ascending; w = 1 when `weights` is null. posOf[t,i] is the
 * expert row of token t's i-th pick: with weights null this is gatherRows' backward (a scatter-add).
 */
export function combineRows(src: FArr, posOf: IArr, weights: FArr | null, dst: FArr, d: CombineDims): void {
  checkCombine('combineRows', src, posOf, d);
  if (weights) checkMoeLength('combineRows.weights', weights, d.tokens * d.topK);
  checkMoeLength('combineRows.dst', dst, d.tokens * d.cols);
  for (let t = 0; t < d.tokens; t++) {
    for (let j = 0; j < d.cols; j++) {
      let acc = 0;
      for (let i = 0; i < d.topK; i++) {
        const a = t * d.topK + i;
        acc += (weights ? weights[a] : 1) * src[posOf[a] * d.cols + j];
      }
      dst[t * d.cols + j] = acc;
    }
  }
}

/**
 * combineRows' backward: dSrc[posOf[t,i],:] = w[t,i]·dDst[t,:];
 * dWeights[t,i] = ⟨dDst[t,:], src[posOf[t,i],:]⟩.
 */
export function combineRowsBwd(
  dDst: FArr,
  src: FArr,
  posOf: IArr,
  weights: FArr,
  dSrc: FArr,
  dWeights: FArr,
  d: CombineDims,
): void {
  checkCombine('combineRowsBwd', src, posOf, d);
  checkMoeLength('combineRowsBwd.dSrc', dSrc, d.srcRows * d.cols);
  checkMoeLength('combineRowsBwd.dWeights', dWeights, d.tokens * d.topK);
  for (let a = 0; a < d.tokens * d.topK; a++) {
    const t = Math.floor(a / d.topK);
    const row = posOf[a] * d.cols;
    let dot = 0;
    for (let j = 0; j < d.cols; j++) {
      const dy = dDst[t * d.cols + j];
      dSrc[row + j] = weights[a] * dy;
      dot += dy * src[row + j];
    }
    dWeights[a] = dot;
  }
}

function checkCombine(kernel: string, src: FArr, posOf: IArr, d: CombineDims): void {
  checkMoeIndex(`${kernel}.posOf`, posOf, d.tokens * d.topK, d.srcRows);
  checkMoeLength(`${kernel}.src`, src, d.srcRows * d.cols);
}
