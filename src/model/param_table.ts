// Parameter table of the Llama-3 decoder in torchtitan's FQNs and module order
// (llm.c's parameter-size table: one row per tensor, one flat space FSDP shards on dim 0).
// A DeepSeek-V3 block (torchtitan models/deepseek_v3/__init__.py build_mla_moe_layers) swaps
// attention for MLA and, past the dense first layers, the feed-forward for `moe`: a router gate,
// routed experts stacked [E, ...] (GroupedExperts w1_EFD / w2_EDF / w3_EFD) and shared experts.
// Its output head keeps our `output` FQN (torchtitan names it lm_head).

import { headDim, isMoeLayer, type MlaArgs, type ModelArgs } from './model_args';

export interface ParamSpec {
  readonly name: string; // torchtitan FQN, 'layers.0.attention.wq.weight'
  readonly shape: readonly number[]; // full shape; dim 0 is the sharded one
  readonly numel: number;
  readonly layer?: number; // transformer block index; absent for tok_embeddings / norm / output
  /** A routed expert's weights [E, ...]: split across the expert-parallel group, FSDP on efsdp. */
  readonly expert?: boolean;
}

const spec = (name: string, shape: number[], layer?: number, expert = false): ParamSpec => ({
  name,
  shape,
  numel: shape.reduce((p, d) => p * d, 1),
  ...(layer === undefined ? {} : { layer }),
  ...(expert ? { expert: true } : {}),
});

type Rows = (readonly [string, number[]])[];

/** Grouped-query attention: suffix → shape ([out, in] for linears). */
function gqaParams(a: ModelArgs): Rows {
  const hd = headDim(a);
  const q = a.nHeads * hd;
  const kv = a.nKvHeads * hd;
  return [
    ['attention.wq.weight', [q, a.dim]],
    ['attention.wk.weight', [kv, a.dim]],
    ['attention.wv.weight', [kv, a.dim]],
    ['attention.wo.weight', [a.dim, q]],
  ];
}

/** Multi-head latent attention (deepseek_v3 make_mla_attention_config): wq, or wq_a → q_norm → wq_b. */
function mlaParams(a: ModelArgs, m: MlaArgs): Rows {
  const qk = a.nHeads * (m.qkNopeHeadDim + m.qkRopeHeadDim);
  const q: Rows =
    m.qLoraRank === 0
      ? [['attention.wq.weight', [qk, a.dim]]]
      : [
          ['attention.wq_a.weight', [m.qLoraRank, a.dim]],
          ['attention.q_norm.weight', [m.qLoraRank]],
          ['attention.wq_b.weight', [qk, m.qLoraRank]],
        ];
  return [
    ...q,
    ['attention.wkv_a.weight', [m.kvLoraRank + m.qkRopeHeadDim, a.dim]],
    ['attention.kv_norm.weight', [m.kvLoraRank]],
    ['attention.wkv_b.weight', [a.nHeads * (m.qkNopeHeadDim + m.vHeadDim), m.kvLoraRank]],
    ['attention.wo.weight', [a.dim, a.nHeads * m.vHeadDim]],
  ];
}

const swigluParams = (prefix: string, D: number, F: number): Rows => [
  [`${prefix}.w1.weight`, [F, D]],
  [`${prefix}.w2.weight`, [D, F]],
  [`${prefix}.w3.weight`, [F, D]],
];

/** Routed experts' FQN suffixes in a block (torchtitan MoE.routed_experts.inner_experts, GroupedExperts). */
export const EXPERT_WEIGHTS = {
  w1: 'moe.routed_experts.inner_experts.w1_EFD', // [E, F, D]
  w2: 'moe.routed_experts.inner_experts.w2_EDF', // [E, D, F]
  w3: 'moe.routed_experts.inner_experts.w3_EFD', // [E, F, D]
} as const;

/** One block's parameters in module order (MoE registers routed_experts, router, shared_experts). */
function blockParams(a: ModelArgs, layer: number): { rows: Rows; experts: ReadonlySet<string> } {
  const attention = a.mla ? mlaParams(a, a.mla) : gqaParams(a);
  const head: Rows = [['attention_norm.weight', [a.dim]], ...attention, ['ffn_norm.weight', [a.dim]]];
  const m = a.moe;
  if (m === undefined || !isMoeLayer(a, layer)) {
    return { rows: [...head, ...swigluParams('feed_forward', a.dim, a.ffnDim)], experts: new Set() };
  }
  const E = m.numExperts;
  const F = m.moeFfnDim;
  const experts: Rows = [
    [EXPERT_WEIGHTS.w1, [E, F, a.dim]],
    [EXPERT_WEIGHTS.w2, [E, a.dim, F]],
    [EXPERT_WEIGHTS.w3, [E, F, a.dim]],
  ];
  const shared = m.numSharedExperts > 0 ? swigluParams('moe.shared_experts', a.dim, F * m.numSharedExperts) : [];
  return {
    rows: [...head, ...experts, ['moe.router.gate.weight', [E, a.dim]], ...shared],
    experts: new Set(experts.map(([s]) => s)),
  };
}

/** All parameters in torchtitan's order. Output is untied from tok_embeddings (as in Llama 3). */
export function paramTable(a: ModelArgs): ParamSpec[] {
  const out: ParamSpec[] = [spec('tok_embeddings.weight', [a.vocabSize, a.dim])];
  for (let i = 0; i < a.nLayers; i++) {
    const { rows, experts } = blockParams(a, i);
    for (const [suffix, shape] of rows) out.push(spec(`layers.${i}.${suffix}`, shape, i, experts.has(suffix)));
  }
  out.push(spec('norm.weight', [a.dim]), spec('output.weight', [a.vocabSize, a.dim]));
  return out;
}

/** Total parameter count. */
export const paramCount = (a: ModelArgs): number => paramTable(a).reduce((s, p) => s + p.numel, 0);

/**
 * Parameters one token passes through: the dense ones plus topK of each MoE layer's E experts
 * (DeepSeek's "activated parameters"; the embedding counted, as DeepSeek-V3's 37B does).
 */
export function activeParamCount(a: ModelArgs): number {
  const m = a.moe;
  return paramTable(a).reduce((s, p) => s + (p.expert && m ? (p.numel / m.numExperts) * m.topK : p.numel), 0);
}
