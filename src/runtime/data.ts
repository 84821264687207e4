// Synthetic training data, generated here (no download): noisy arithmetic progressions.
// Each sequence picks a start x0 and a stride k ∈ [1, maxStride] and continues
// x_{t+1} = (x_t + k) mod A over an alphabet of A ≤ V tokens (default 64); each token is
// replaced by a uniform random one with probability `noise`. A tiny causal transformer learns it
// fast: the unigram alone takes the loss from ln V (uniform init) to ln A, and after two tokens
// the model knows k, so the loss halves within ~40 steps and approaches the noise floor.
// The global batch of a step depends only on (seed, step); rank r takes rows [r·B, (r+1)·B).

import { ConfigError } from '../errors';
import { hashSeed, splitmix32 } from './init';

export interface DataConfig {
  readonly vocab: number; // V
  readonly seqLen: number; // tokens per row (targets are the next tokens)
  readonly globalBatch: number; // rows per step across all ranks
  readonly seed: number;
  /** Probability that a token is replaced by a uniform random one (keeps the task non-trivial). */
  readonly noise?: number;
  /** Strides are drawn from [1, maxStride]. */
  readonly maxStride?: number;
  /** Tokens live in [0, alphabet) ⊆ [0, vocab): progressions wrap mod alphabet. Default min(vocab, 64). */
  readonly alphabet?: number;
}

const DEFAULT_NOISE = 0.02;
const DEFAULT_MAX_STRIDE = 4;
const DEFAULT_ALPHABET = 64;

export interface Batch {
  readonly tokens: Int32Array; // [rows · seqLen]
  readonly targets: Int32Array; // [rows · seqLen], targets[i] = the token after tokens[i]
}

/** One row: seqLen + 1 tokens of a noisy progression, from its own seeded stream. */
function makeRow(cfg: DataConfig, step: number, row: number): Int32Array {
  const rand = splitmix32(hashSeed(cfg.seed, `data/${step}/${row}`));
  const V = Math.max(2, Math.min(cfg.alphabet ?? DEFAULT_ALPHABET, cfg.vocab));
  const noise = cfg.noise ?? DEFAULT_NOISE;
  const maxStride = Math.max(1, Math.min(cfg.maxStride ?? DEFAULT_MAX_STRIDE, V - 1));
  const k = 1 + Math.floor(rand() * maxStride);
  let x = Math.floor(rand() * V);
  const out = new Int32Array(cfg.seqLen + 1);
  for (let t = 0; t <= cfg.seqLen; t++) {
    const flip = rand() < noise;
    const r = Math.floor(rand() * V);
    out[t] = flip ? r : x;
    x = (x + k) % V;
  }
  return out;
}

/** Rows [firstRow, firstRow + rows) of step `step`'s global batch. */
export function batchRows(cfg: DataConfig, step: number, firstRow: number, rows: number): Batch {
  const S = cfg.seqLen;
  const tokens = new Int32Array(rows * S);
  const targets = new Int32Array(rows * S);
  for (let b = 0; b < rows; b++) {
    const seq = makeRow(cfg, step, firstRow + b);
    tokens.set(seq.subarray(0, S), b * S);
    targets.set(seq.subarray(1, S + 1), b * S);
  }
  return { tokens, targets };
}

/** Rank r's share of the step's global batch: rows [r·B, (r+1)·B), B = globalBatch / worldSize. */
export function rankBatch(cfg: DataConfig, step: number, rank: number, worldSize: number): Batch {
  const local = localBatchSize(cfg.globalBatch, worldSize);
  return batchRows(cfg, step, rank * local, local);
}

/** Rows per rank; the global batch must split evenly. */
function localBatchSize(globalBatch: number, worldSize: number): number {
  if (globalBatch % worldSize !== 0) {
    throw new ConfigError('globalBatch', `globalBatch must be divisible by ranks (${worldSize}), got ${globalBatch}`);
  }
  return globalBatch / worldSize;
}
