// CPU reference RMSNorm over the last dim and its backward (the spec for shaders/rms_norm.wgsl).
// y = x · rstd · w, rstd = 1/sqrt(mean(x²) + eps). Backward, with g = dy·w:
// dx = rstd · (g − x · rstd² · mean(g·x)),  dw = Σ_rows dy · x · rstd.
import type { RmsNormDims } from './attrs';
import type { FArr } from './cpu_types';

export function rmsNorm(x: FArr, w: FArr, y: FArr, rstd: FArr, d: RmsNormDims): void {
  const C = d.cols;
  for (let r = 0; r < d.rows; r++) {
    let ss = 0;
    for (let c = 0; c < C; c++) ss += x[r * C + c] * x[r * C + c];
    const rs = 1 / Math.sqrt(ss / C + d.eps);
    rstd[r] = rs;
    for (let c = 0; c < C; c++) y[r * C + c] = x[r * C + c] * rs * w[c];
  }
}

export function rmsNormBwd(
  dy: FArr,
  x: FArr,
  w: FArr,
  rstd: FArr,
  dx: FArr,
  dw: FArr,
  d: Omit<RmsNormDims, 'eps'>,
): void {
  const C = d.cols;
  for (let r = 0; r < d.rows; r++) {
    const rs = rstd[r];
    let gx = 0;
    for (let c = 0; c < C; c++) gx += dy[r * C + c] * w[c] * x[r * C + c];
    const k = (rs * rs * gx) / C;
    for (let c = 0; c < C; c++) dx[r * C + c] = rs * (dy[r * C + c] * w[c] - x[r * C + c] * k);
  }
  for (let c = 0; c < C; c++) {
    let acc = 0;
    for (let r = 0; r < d.rows; r++) acc += dy[r * C + c] * x[r * C + c] * rstd[r];
    dw[c] = acc;
  }
}
