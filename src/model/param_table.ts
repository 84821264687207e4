// Parameter table of the Llama-3 decoder in torchtitan's FQNs and module order
// (llm.c's parameter-size table: one row per tensor, one flat space FSDP shards on dim 0).

import { headDim, type ModelArgs } from './args';

export interface ParamSpec {
  readonly name: string; // torchtitan FQN, 'layers.0.attention.wq.weight'
  readonly shape: readonly number[]; // full shape; dim 0 is the sharded one
  readonly numel: number;
  readonly layer?: number; // transformer block index; absent for tok_embeddings / norm / output
}

const spec = (name: string, shape: number[], layer?: number): ParamSpec => ({
  name,
  shape,
  numel: shape.reduce((p, d) => p * d, 1),
  ...(layer === undefined ? {} : { layer }),
});

/** Per-block parameter suffixes in module order. */
export const LAYER_PARAM_SUFFIXES = [
  'attention_norm.weight',
  'attention.wq.weight',
  'attention.wk.weight',
  'attention.wv.weight',
  'attention.wo.weight',
  'ffn_norm.weight',
  'feed_forward.w1.weight',
  'feed_forward.w2.weight',
  'feed_forward.w3.weight',
] as const;

/** All parameters in torchtitan's order. Output is untied from tok_embeddings (as in Llama 3). */
export function paramTable(a: ModelArgs): ParamSpec[] {
  const D = a.dim;
  const hd = headDim(a);
  const q = a.nHeads * hd; // = D
  const kv = a.nKvHeads * hd;
  const F = a.ffnDim;
  const out: ParamSpec[] = [spec('tok_embeddings.weight', [a.vocabSize, D])];
  for (let i = 0; i < a.nLayers; i++) {
    const p = `layers.${i}`;
    out.push(
      spec(`${p}.attention_norm.weight`, [D], i),
      spec(`${p}.attention.wq.weight`, [q, D], i),
      spec(`${p}.attention.wk.weight`, [kv, D], i),
      spec(`${p}.attention.wv.weight`, [kv, D], i),
      spec(`${p}.attention.wo.weight`, [D, q], i),
      spec(`${p}.ffn_norm.weight`, [D], i),
      spec(`${p}.feed_forward.w1.weight`, [F, D], i),
      spec(`${p}.feed_forward.w2.weight`, [D, F], i),
      spec(`${p}.feed_forward.w3.weight`, [F, D], i),
    );
  }
  out.push(spec('norm.weight', [D]), spec('output.weight', [a.vocabSize, D]));
  return out;
}

/** Total parameter count. */
export const paramCount = (a: ModelArgs): number => paramTable(a).reduce((s, p) => s + p.numel, 0);
