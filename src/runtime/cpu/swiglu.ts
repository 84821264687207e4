// CPU reference SwiGLU gate and its backward (the spec for shaders/swiglu.wgsl).
// g = silu(a)·b, silu(a) = a·σ(a);  da = dg·b·σ(a)·(1 + a·(1−σ(a))),  db = dg·silu(a).
import type { FArr } from './cpu_types';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function swiglu(a: FArr, b: FArr, g: FArr, n: number): void {
  for (let i = 0; i < n; i++) g[i] = a[i] * sigmoid(a[i]) * b[i];
}

export function swigluBwd(dg: FArr, a: FArr, b: FArr, da: FArr, db: FArr, n: number): void {
  for (let i = 0; i < n; i++) {
    const s = sigmoid(a[i]);
    da[i] = dg[i] * b[i] * s * (1 + a[i] * (1 - s));
    db[i] = dg[i] * a[i] * s;
  }
}
