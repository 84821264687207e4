// CPU reference grouped GEMM (the spec for shaders/grouped_matmul*.wgsl): the rows of expert e are
// the contiguous range [offsets[e], offsets[e+1]) of x, multiplied by that expert's weight w[e]
// ([K, N], row-major; w is [E, K, N]). Backward: dX by each row's expert weight transposed, dW[e]
// summed over the expert's rows in ascending order (zero for an expert that got no rows).
import type { FArr, IArr } from './cpu_types';
import { checkMoeLength, checkOffsets } from './moe_checks';

export interface GroupedMatmulDims {
  readonly rows: number; // P: rows of x over all experts
  readonly experts: number; // E
  readonly K: number; // input features
  readonly N: number; // output features
}

/** y[p,:] = x[p,:] · w[e] for p in expert e's range. */
export function groupedMatmul(x: FArr, w: FArr, offsets: IArr, y: FArr, d: GroupedMatmulDims): void {
  checkGrouped('groupedMatmul', { x, w }, offsets, d);
  checkMoeLength('groupedMatmul.y', y, d.rows * d.N);
  for (let e = 0; e < d.experts; e++) {
    const we = e * d.K * d.N;
    for (let p = offsets[e]; p < offsets[e + 1]; p++) {
      for (let n = 0; n < d.N; n++) {
        let acc = 0;
        for (let k = 0; k < d.K; k++) acc += x[p * d.K + k] * w[we + k * d.N + n];
        y[p * d.N + n] = acc;
      }
    }
  }
}

/** dx[p,:] = dy[p,:] · w[e]ᵀ. */
export function groupedMatmulBwdX(dy: FArr, w: FArr, offsets: IArr, dx: FArr, d: GroupedMatmulDims): void {
  checkGrouped('groupedMatmulBwdX', { dx, w }, offsets, d);
  checkMoeLength('groupedMatmulBwdX.dy', dy, d.rows * d.N);
  for (let e = 0; e < d.experts; e++) {
    const we = e * d.K * d.N;
    for (let p = offsets[e]; p < offsets[e + 1]; p++) {
      for (let k = 0; k < d.K; k++) {
        let acc = 0;
        for (let n = 0; n < d.N; n++) acc += dy[p * d.N + n] * w[we + k * d.N + n];
        dx[p * d.K + k] = acc;
      }
    }
  }
}

/** dw[e] = Σ_{p in e} x[p,:]ᵀ · dy[p,:], p ascending. */
export function groupedMatmulBwdW(dy: FArr, x: FArr, offsets: IArr, dw: FArr, d: GroupedMatmulDims): void {
  checkGrouped('groupedMatmulBwdW', { x, dw }, offsets, d);
  checkMoeLength('groupedMatmulBwdW.dy', dy, d.rows * d.N);
  for (let e = 0; e < d.experts; e++) {
    const we = e * d.K * d.N;
    for (let k = 0; k < d.K; k++) {
      for (let n = 0; n < d.N; n++) {
        let acc = 0;
        for (let p = offsets[e]; p < offsets[e + 1]; p++) acc += x[p * d.K + k] * dy[p * d.N + n];
        dw[we + k * d.N + n] = acc;
      }
    }
  }
}

/** The offsets, the [P, K] buffer (x or dx) and the [E, K, N] one (w or dw), each error naming its buffer. */
function checkGrouped(kernel: string, bufs: Readonly<Record<string, FArr>>, offsets: IArr, d: GroupedMatmulDims): void {
  checkOffsets(`${kernel}.offsets`, offsets, d.experts, d.rows);
  const [[rowsName, rows], [weightName, weight]] = Object.entries(bufs);
  checkMoeLength(`${kernel}.${rowsName}`, rows, d.rows * d.K);
  checkMoeLength(`${kernel}.${weightName}`, weight, d.experts * d.K * d.N);
}
