// CPU reference AdamW (the spec for shaders/adamw.wgsl); follows torch.optim.AdamW (decoupled
// weight decay) and llm.c adamw_update. With t the 1-based step:
// m' = β1·m + (1−β1)·g;  v' = β2·v + (1−β2)·g²;  m̂ = m'/(1−β1ᵗ);  v̂ = v'/(1−β2ᵗ)
// p' = p − lr·(m̂/(√v̂ + eps) + wd·p)
import type { AdamwAttrs } from './attrs';
import type { FArr } from './cpu_types';

/** Bias corrections 1−β1ᵗ and 1−β2ᵗ, in fp64 (the GPU kernel gets these as uniforms). */
export function adamwBiasCorrections(h: Pick<AdamwAttrs, 'beta1' | 'beta2'>, step: number) {
  return { bc1: 1 - h.beta1 ** step, bc2: 1 - h.beta2 ** step };
}

export function adamw(
  p: FArr,
  g: FArr,
  m: FArr,
  v: FArr,
  pOut: FArr,
  mOut: FArr,
  vOut: FArr,
  h: AdamwAttrs,
  step: number,
): void {
  const { bc1, bc2 } = adamwBiasCorrections(h, step);
  for (let i = 0; i < h.n; i++) {
    const mi = h.beta1 * m[i] + (1 - h.beta1) * g[i];
    const vi = h.beta2 * v[i] + (1 - h.beta2) * g[i] * g[i];
    const mhat = mi / bc1;
    const vhat = vi / bc2;
    pOut[i] = p[i] - h.lr * (mhat / (Math.sqrt(vhat) + h.eps) + h.weightDecay * p[i]);
    mOut[i] = mi;
    vOut[i] = vi;
  }
}
