// Parameter table of the Llama-3 decoder in torchtitan's FQNs and module order
// (llm.c's parameter-size table: one row per tensor, one flat space FSDP shards on dim 0).

import { headDim, type ModelArgs } from './model_args';

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

interface BlockDims {
  readonly D: number; // model dim
  readonly q: number; // nHeads · head dim (= D)
  readonly kv: number; // nKvHeads · head dim (grouped-query attention)
  readonly F: number; // feed-forward hidden dim
}

/** One transformer block's parameters in module order: suffix → shape ([out, in] for linears). */
const LAYER_PARAMS: readonly (readonly [string, (d: BlockDims) => number[]])[] = [
  ['attention_norm.weight', (d) => [d.D]],
  ['attention.wq.weight', (d) => [d.q, d.D]],
  ['attention.wk.weight', (d) => [d.kv, d.D]],
  ['attention.wv.weight', (d) => [d.kv, d.D]],
  ['attention.wo.weight', (d) => [d.D, d.q]],
  ['ffn_norm.weight', (d) => [d.D]],
  ['feed_forward.w1.weight', (d) => [d.F, d.D]],
  ['feed_forward.w2.weight', (d) => [d.D, d.F]],
  ['feed_forward.w3.weight', (d) => [d.F, d.D]],
];

/** All parameters in torchtitan's order. Output is untied from tok_embeddings (as in Llama 3). */
export function paramTable(a: ModelArgs): ParamSpec[] {
  const hd = headDim(a);
  const dims: BlockDims = { D: a.dim, q: a.nHeads * hd, kv: a.nKvHeads * hd, F: a.ffnDim };
  const out: ParamSpec[] = [spec('tok_embeddings.weight', [a.vocabSize, a.dim])];
  for (let i = 0; i < a.nLayers; i++) {
    for (const [suffix, shape] of LAYER_PARAMS) out.push(spec(`layers.${i}.${suffix}`, shape(dims), i));
  }
  out.push(spec('norm.weight', [a.dim]), spec('output.weight', [a.vocabSize, a.dim]));
  return out;
}

/** Total parameter count. */
export const paramCount = (a: ModelArgs): number => paramTable(a).reduce((s, p) => s + p.numel, 0);
