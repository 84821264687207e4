// Model arguments of a Llama-3 style decoder; field names follow torchtitan's
// `TransformerModelArgs` (models/llama3/model/args.py), camelCased. A DeepSeek-V3 model
// (torchtitan models/deepseek_v3/__init__.py) adds `moe` (routed and shared experts after the
// dense first layers) and `mla` (multi-head latent attention) to the same args.

/** Preset names ("flavors" in torchtitan). `tiny` is our browser-trainable debugmodel. */
export type ModelName =
  | 'tiny'
  | 'small'
  | 'llama3-8b'
  | 'llama3-70b'
  | 'llama3-405b'
  | 'moe-tiny'
  | 'dsv3-debug'
  | 'dsv3-16b'
  | 'dsv3-671b';

export const MODEL_NAMES: readonly ModelName[] = [
  'tiny',
  'small',
  'llama3-8b',
  'llama3-70b',
  'llama3-405b',
  'moe-tiny',
  'dsv3-debug',
  'dsv3-16b',
  'dsv3-671b',
];

/** Mixture of experts (torchtitan models/common/moe.py `MoE`: token-choice top-k router, grouped experts). */
export interface MoeArgs {
  /** Routed experts E per MoE layer. */
  readonly numExperts: number;
  /** Experts each token is routed to (router top_k). */
  readonly topK: number;
  /** Hidden width of one routed expert (moe_hidden_dim); shared experts are numSharedExperts times it. */
  readonly moeFfnDim: number;
  /** Shared experts (one SwiGLU of hidden moeFfnDim · numSharedExperts every token passes); 0 = none. */
  readonly numSharedExperts: number;
  /** The first nDenseLayers blocks keep a dense SwiGLU of hidden ffnDim (torchtitan n_dense_layers). */
  readonly nDenseLayers: number;
}

/** Multi-head latent attention (DeepSeek-V3, torchtitan deepseek_v3 `Attention`). */
export interface MlaArgs {
  /** Rank of the query down-projection wq_a; 0 = one wq (the 16B flavor). */
  readonly qLoraRank: number;
  /** Rank of the joint key-value down-projection wkv_a (before kv_norm). */
  readonly kvLoraRank: number;
  /** Per-head query/key dims without and with rotary embedding; qk head dim = their sum. */
  readonly qkNopeHeadDim: number;
  readonly qkRopeHeadDim: number;
  /** Per-head value dim. */
  readonly vHeadDim: number;
}

export interface ModelArgs {
  /** Model (residual stream) width D. Must be divisible by nHeads. */
  readonly dim: number;
  /** Number of transformer blocks. */
  readonly nLayers: number;
  /** Query heads H; head dim hd = dim / nHeads. */
  readonly nHeads: number;
  /** Key/value heads (GQA); nHeads must be divisible by nKvHeads. Equal to nHeads for plain MHA. */
  readonly nKvHeads: number;
  /** Vocabulary size V (rows of tok_embeddings and output). */
  readonly vocabSize: number;
  /** Hidden width F of the SwiGLU feed-forward (rows of w1 / w3); an MoE model's dense layers'. */
  readonly ffnDim: number;
  /** RMSNorm epsilon. */
  readonly normEps: number;
  /** Default sequence length S (tokens per sample). */
  readonly seqLen: number;
  /** Default local (per-rank) batch B; T = B·S tokens per rank and step. */
  readonly batch: number;
  /** Mixture of experts; absent = every block dense. */
  readonly moe?: MoeArgs;
  /** Multi-head latent attention; absent = grouped-query attention. */
  readonly mla?: MlaArgs;
}

/** Head dim hd = dim / nHeads. */
export const headDim = (a: ModelArgs): number => a.dim / a.nHeads;

/** Whether block `layer` routes its tokens to experts (an MoE model past its dense first layers). */
export const isMoeLayer = (a: ModelArgs, layer: number): boolean => a.moe !== undefined && layer >= a.moe.nDenseLayers;
