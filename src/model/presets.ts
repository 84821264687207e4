// Model presets, a record flavor → args like torchtitan's `llama3_args` (models/llama3/__init__.py).
// The llama3 rows use Meta's published shapes; their ffnDim is what torchtitan derives from
// ffn_dim_multiplier / multiple_of (8b: 1.3 → 14336, 70b: 1.3 → 28672, 405b: 1.2 → 53248).

import { ConfigError, oneOfMessage } from '../errors';
import { MODEL_NAMES, type ModelArgs, type ModelName } from './model_args';

export const MODEL_PRESETS: Readonly<Record<ModelName, ModelArgs>> = {
  // torchtitan 'debugmodel'-like, small enough to train in a browser on CPU / SwiftShader.
  // Every dim divisible by 8, so shards are even on 1, 2, 4 and 8 ranks.
  tiny: {
    dim: 64,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 4,
    vocabSize: 256,
    ffnDim: 192,
    normEps: 1e-5,
    seqLen: 32,
    batch: 4,
  },
  // A few-million-parameter model for the live mode on a real GPU.
  small: {
    dim: 256,
    nLayers: 4,
    nHeads: 8,
    nKvHeads: 8,
    vocabSize: 2048,
    ffnDim: 768,
    normEps: 1e-5,
    seqLen: 128,
    batch: 4,
  },
  // Local batch sizes as in torchtitan's train_configs/llama3_*.toml.
  'llama3-8b': {
    dim: 4096,
    nLayers: 32,
    nHeads: 32,
    nKvHeads: 8,
    vocabSize: 128256,
    ffnDim: 14336,
    normEps: 1e-5,
    seqLen: 8192,
    batch: 1,
  },
  'llama3-70b': {
    dim: 8192,
    nLayers: 80,
    nHeads: 64,
    nKvHeads: 8,
    vocabSize: 128256,
    ffnDim: 28672,
    normEps: 1e-5,
    seqLen: 8192,
    batch: 8,
  },
  'llama3-405b': {
    dim: 16384,
    nLayers: 126,
    nHeads: 128,
    nKvHeads: 8,
    vocabSize: 128256,
    ffnDim: 53248,
    normEps: 1e-5,
    seqLen: 8192,
    batch: 2,
  },
};

/** torchtitan `activation_checkpoint.mode`; 'selective' is its op-level option. The one list of modes. */
export const AC_MODES = ['none', 'selective', 'full'] as const;
export type ActivationCheckpointing = (typeof AC_MODES)[number];

/**
 * torchtitan's `activation_checkpoint.mode` in each flavor's train config: llama3_70b.toml and
 * llama3_405b.toml use "full", llama3_8b.toml "selective" (selective_ac_option "op"); tiny / small
 * (our debugmodels, trained live in the browser) run without AC.
 */
export const TRAIN_AC_MODE: Readonly<Record<ModelName, ActivationCheckpointing>> = {
  tiny: 'none',
  small: 'none',
  'llama3-8b': 'selective',
  'llama3-70b': 'full',
  'llama3-405b': 'full',
};

export function isModelName(x: unknown): x is ModelName {
  return typeof x === 'string' && (MODEL_NAMES as readonly string[]).includes(x);
}

/** The preset's args; throws ConfigError listing the valid names. */
export function getModelArgs(name: string): ModelArgs {
  if (!isModelName(name)) throw new ConfigError('model', oneOfMessage('model', MODEL_NAMES, name));
  return MODEL_PRESETS[name];
}

/** Bounds that keep a graph buildable in a browser tab (llama3-405b has 126 layers). */
const MAX_LAYERS = 1024;
export const MAX_DIM = 1 << 24;
const INT_FIELDS = ['dim', 'nLayers', 'nHeads', 'nKvHeads', 'vocabSize', 'ffnDim', 'seqLen', 'batch'] as const;
const ALL_FIELDS: readonly string[] = [...INT_FIELDS, 'normEps'];

/**
 * Checks a user-given ModelArgs: positive integers, dim % nHeads = 0, nHeads % nKvHeads = 0,
 * normEps in (0, 1). Unknown keys are an error. Returns the args typed.
 */
export function validateModelArgs(x: unknown, field = 'model'): ModelArgs {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) {
    throw new ConfigError(
      field,
      `${field} must be a preset name [${MODEL_NAMES.join(', ')}] or a ModelArgs object, got ${JSON.stringify(x)}`,
    );
  }
  const o = x as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!ALL_FIELDS.includes(k)) throw new ConfigError(`${field}.${k}`, oneOfMessage(`${field} key`, ALL_FIELDS, k));
  }
  for (const k of INT_FIELDS) {
    const v = o[k];
    const hi = k === 'nLayers' ? MAX_LAYERS : MAX_DIM;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > hi) {
      throw new ConfigError(
        `${field}.${k}`,
        `${field}.${k} must be an integer in [1, ${hi}], got ${JSON.stringify(v)}`,
      );
    }
  }
  const eps = o.normEps;
  if (typeof eps !== 'number' || !Number.isFinite(eps) || eps <= 0 || eps >= 1) {
    throw new ConfigError(
      `${field}.normEps`,
      `${field}.normEps must be a number in (0, 1), got ${JSON.stringify(eps)}`,
    );
  }
  const a = o as unknown as ModelArgs;
  if (a.dim % a.nHeads !== 0) {
    throw new ConfigError(
      `${field}.nHeads`,
      `${field}.dim (${a.dim}) must be divisible by nHeads, got nHeads ${a.nHeads}`,
    );
  }
  if (a.nHeads % a.nKvHeads !== 0) {
    throw new ConfigError(
      `${field}.nKvHeads`,
      `${field}.nHeads (${a.nHeads}) must be divisible by nKvHeads, got nKvHeads ${a.nKvHeads}`,
    );
  }
  return { ...a };
}
