// CPU reference token embedding and its backward (the spec for shaders/embedding.wgsl).
// Forward gathers rows; backward zeroes dWeight then scatter-adds dOut rows in token order,
// which is exactly the order the WGSL kernel's per-(row, column) scan uses.
import { ConfigError } from '../../errors';
import type { EmbeddingDims } from './attrs';
import type { FArr, IArr } from './types';

function tokenAt(tokens: IArr, t: number, V: number): number {
  const id = tokens[t];
  if (id < 0 || id >= V) throw new ConfigError(`tokens[${t}]`, `tokens[${t}] must be in [0, ${V}), got ${id}`);
  return id;
}

/** out[t,:] = weight[tokens[t],:] */
export function embedding(weight: FArr, tokens: IArr, out: FArr, d: EmbeddingDims): void {
  for (let t = 0; t < d.T; t++) {
    const row = tokenAt(tokens, t, d.V) * d.D;
    for (let j = 0; j < d.D; j++) out[t * d.D + j] = weight[row + j];
  }
}

/** dWeight[v,:] = Σ_{t: tokens[t]=v} dOut[t,:], summed in ascending t. */
export function embeddingBwd(dOut: FArr, tokens: IArr, dWeight: FArr, d: EmbeddingDims): void {
  dWeight.fill(0, 0, d.V * d.D);
  for (let t = 0; t < d.T; t++) {
    const row = tokenAt(tokens, t, d.V) * d.D;
    for (let j = 0; j < d.D; j++) dWeight[row + j] += dOut[t * d.D + j];
  }
}
