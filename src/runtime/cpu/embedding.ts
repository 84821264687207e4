// CPU reference token embedding and its backward (the spec for shaders/embedding.wgsl).
// Forward gathers rows; backward zeroes dWeight then scatter-adds dOut rows in token order,
// which is exactly the order the WGSL kernel's per-(row, column) scan uses. A vocabulary-sharded
// table (TP, dims.vocabStart) holds one slice of the ids: the others give zero rows and no gradient.
import { ConfigError } from '../../errors';
import type { EmbeddingDims } from './attrs';
import type { FArr, IArr } from './cpu_types';

/** The table row of tokens[t]; -1 when a sharded table does not hold it. */
function rowAt(tokens: IArr, t: number, d: EmbeddingDims): number {
  const id = tokens[t];
  if (d.vocabStart !== undefined) return id >= d.vocabStart && id < d.vocabStart + d.V ? id - d.vocabStart : -1;
  if (id < 0 || id >= d.V) throw new ConfigError(`tokens[${t}]`, `tokens[${t}] must be in [0, ${d.V}), got ${id}`);
  return id;
}

/** out[t,:] = weight[tokens[t],:] */
export function embedding(weight: FArr, tokens: IArr, out: FArr, d: EmbeddingDims): void {
  for (let t = 0; t < d.T; t++) {
    const v = rowAt(tokens, t, d);
    for (let j = 0; j < d.D; j++) out[t * d.D + j] = v < 0 ? 0 : weight[v * d.D + j];
  }
}

/** dWeight[v,:] = Σ_{t: tokens[t]=v} dOut[t,:], summed in ascending t. */
export function embeddingBwd(dOut: FArr, tokens: IArr, dWeight: FArr, d: EmbeddingDims): void {
  dWeight.fill(0, 0, d.V * d.D);
  for (let t = 0; t < d.T; t++) {
    const v = rowAt(tokens, t, d);
    if (v < 0) continue;
    for (let j = 0; j < d.D; j++) dWeight[v * d.D + j] += dOut[t * d.D + j];
  }
}
