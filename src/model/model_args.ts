// Model arguments of a Llama-3 style decoder; field names follow torchtitan's
// `TransformerModelArgs` (models/llama3/model/args.py), camelCased.

/** Preset names ("flavors" in torchtitan). `tiny` is our browser-trainable debugmodel. */
export type ModelName = 'tiny' | 'small' | 'llama3-8b' | 'llama3-70b' | 'llama3-405b';

export const MODEL_NAMES: readonly ModelName[] = ['tiny', 'small', 'llama3-8b', 'llama3-70b', 'llama3-405b'];

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
  /** Hidden width F of the SwiGLU feed-forward (rows of w1 / w3). */
  readonly ffnDim: number;
  /** RMSNorm epsilon. */
  readonly normEps: number;
  /** Default sequence length S (tokens per sample). */
  readonly seqLen: number;
  /** Default local (per-rank) batch B; T = B·S tokens per rank and step. */
  readonly batch: number;
}

/** Head dim hd = dim / nHeads. */
export const headDim = (a: ModelArgs): number => a.dim / a.nHeads;
