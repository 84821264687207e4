// Model presets, a record flavor → args like torchtitan's `llama3_args` (models/llama3/__init__.py).
// The llama3 rows use Meta's published shapes; their ffnDim is what torchtitan derives from
// ffn_dim_multiplier / multiple_of (8b: 1.3 → 14336, 70b: 1.3 → 28672, 405b: 1.2 → 53248).
// The dsv3 rows are torchtitan's deepseekv3_configs (models/deepseek_v3/__init__.py, pytorch/torchtitan
// commit b5bcd76c66d0acb1a08b176d9639425bc55e0b2a): debugmodel, 16B, 671B; batch and seqLen from
// config_registry.py (num_tokens_per_microbatch_per_dp_rank, max_context_length). Multi-token
// prediction (num_mtp_layers, default 0) is left out, as in those configs.

import { ConfigError, oneOfMessage } from '../errors';
import { intIn } from '../util';
import { MODEL_NAMES, type MlaArgs, type ModelArgs, type ModelName, type MoeArgs } from './model_args';

/** DeepSeek-V3's MLA without a query LoRA (debugmodel and 16B: q_lora_rank 0). */
const MLA_NO_Q_LORA: MlaArgs = { qLoraRank: 0, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 };

/** The dsv3 presets: MHA-shaped args (MLA has no kv-head grouping), RMSNorm eps as torchtitan's default. */
const dsv3 = (a: Omit<ModelArgs, 'nKvHeads' | 'normEps'>, moe: MoeArgs): ModelArgs => ({
  ...a,
  nKvHeads: a.nHeads,
  normEps: 1e-5,
  moe,
});

// torchtitan 'debugmodel'-like, small enough to train in a browser on CPU / SwiftShader.
// Every dim divisible by 8, so shards are even on 1, 2, 4 and 8 ranks.
const TINY: ModelArgs = {
  dim: 64,
  nLayers: 2,
  nHeads: 4,
  nKvHeads: 4,
  vocabSize: 256,
  ffnDim: 192,
  normEps: 1e-5,
  seqLen: 32,
  batch: 4,
};

export const MODEL_PRESETS: Readonly<Record<ModelName, ModelArgs>> = {
  tiny: TINY,
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
  // Our MoE debugmodel for live training: tiny's dims, one dense block then one MoE block of 4
  // experts (top-2, hidden 64) and one shared expert; grouped-query attention, no MLA.
  'moe-tiny': { ...TINY, moe: { numExperts: 4, topK: 2, moeFfnDim: 64, numSharedExperts: 1, nDenseLayers: 1 } },
  // torchtitan deepseek_v3 'debugmodel' (8 · 2048 tokens per rank)
  'dsv3-debug': dsv3(
    { dim: 256, nLayers: 6, nHeads: 16, vocabSize: 2048, ffnDim: 1024, seqLen: 2048, batch: 8, mla: MLA_NO_Q_LORA },
    { numExperts: 8, topK: 3, moeFfnDim: 256, numSharedExperts: 2, nDenseLayers: 1 },
  ),
  // torchtitan deepseek_v3 '16B' (DeepSeek-MoE 16B shapes; 4 · 4096 tokens per rank)
  'dsv3-16b': dsv3(
    {
      dim: 2048,
      nLayers: 27,
      nHeads: 16,
      vocabSize: 102400,
      ffnDim: 10944,
      seqLen: 4096,
      batch: 4,
      mla: MLA_NO_Q_LORA,
    },
    { numExperts: 64, topK: 6, moeFfnDim: 1408, numSharedExperts: 2, nDenseLayers: 1 },
  ),
  // torchtitan deepseek_v3 '671B' (sigmoid router, 8 groups of which 4 limited: routing cost only)
  'dsv3-671b': dsv3(
    {
      dim: 7168,
      nLayers: 61,
      nHeads: 128,
      vocabSize: 129280,
      ffnDim: 18432,
      seqLen: 4096,
      batch: 4,
      mla: { ...MLA_NO_Q_LORA, qLoraRank: 1536 },
    },
    { numExperts: 256, topK: 8, moeFfnDim: 2048, numSharedExperts: 1, nDenseLayers: 3 },
  ),
};

/** torchtitan `activation_checkpoint.mode`; 'selective' is its op-level option. The one list of modes. */
export const AC_MODES = ['none', 'selective', 'full'] as const;
export type ActivationCheckpointing = (typeof AC_MODES)[number];

/**
 * torchtitan's `activation_checkpoint.mode` in each flavor's train config: llama3_70b.toml and
 * llama3_405b.toml use "full", llama3_8b.toml "selective" (selective_ac_option "op"); tiny / small
 * (our debugmodels, trained live in the browser) run without AC, and so does moe-tiny. torchtitan's
 * deepseek_v3 config_registry.py (b5bcd76) gives debugmodel, 16b and 671b `SelectiveAC.Config()`:
 * op-level selective AC.
 */
export const TRAIN_AC_MODE: Readonly<Record<ModelName, ActivationCheckpointing>> = {
  tiny: 'none',
  small: 'none',
  'llama3-8b': 'selective',
  'llama3-70b': 'full',
  'llama3-405b': 'full',
  'moe-tiny': 'none',
  'dsv3-debug': 'selective',
  'dsv3-16b': 'selective',
  'dsv3-671b': 'selective',
};

/**
 * Whether torchtitan's train config of each flavor compiles the loss (`compile.enable` with "loss" in
 * `compile.components`, whose default is ["model", "loss"]: torchtitan config/configs.py CompileConfig).
 * deepseek_v3 config_registry.py (b5bcd76) gives 16b and 671b `CompileConfig(enable=True,
 * components=["loss"])`, as deepseek_v3_16b.toml / deepseek_v3_671b.toml did in Oct 2025 (8a2686c4a);
 * its debugmodel compiles nothing. llama3 config_registry.py (b5bcd76) compiles only 405b (enable=True,
 * the default components), as llama3_405b.toml did; llama3_8b.toml and llama3_70b.toml had enable=false.
 * tiny / small / moe-tiny are our debugmodels (eager).
 */
export const TRAIN_COMPILE_LOSS: Readonly<Record<ModelName, boolean>> = {
  tiny: false,
  small: false,
  'llama3-8b': false,
  'llama3-70b': false,
  'llama3-405b': true,
  'moe-tiny': false,
  'dsv3-debug': false,
  'dsv3-16b': true,
  'dsv3-671b': true,
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
const ALL_FIELDS: readonly string[] = [...INT_FIELDS, 'normEps', 'moe', 'mla'];
const MOE_FIELDS = ['numExperts', 'topK', 'moeFfnDim', 'numSharedExperts', 'nDenseLayers'] as const;
const MLA_FIELDS = ['qLoraRank', 'kvLoraRank', 'qkNopeHeadDim', 'qkRopeHeadDim', 'vHeadDim'] as const;

/** An object of integer fields, each in [lo, hi(key)]; unknown keys are an error. */
function intRecord<K extends string>(
  field: string,
  x: unknown,
  keys: readonly K[],
  lo: (k: K) => number,
  hi: number,
): Record<K, number> {
  if (typeof x !== 'object' || x === null || Array.isArray(x))
    throw new ConfigError(field, `${field} must be an object with keys [${keys.join(', ')}], got ${JSON.stringify(x)}`);
  const o = x as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(keys as readonly string[]).includes(k))
      throw new ConfigError(`${field}.${k}`, oneOfMessage(`${field} key`, keys, k));
  }
  const out = {} as Record<K, number>;
  for (const k of keys) out[k] = intIn(`${field}.${k}`, o[k], lo(k), hi);
  return out;
}

/** moe: integers ≥ 1 (shared experts and dense layers ≥ 0), topK ≤ numExperts, nDenseLayers ≤ nLayers. */
function validateMoe(field: string, x: unknown, nLayers: number): MoeArgs {
  const zeroOk = (k: string) => (k === 'numSharedExperts' || k === 'nDenseLayers' ? 0 : 1);
  const m = intRecord(field, x, MOE_FIELDS, zeroOk, MAX_DIM);
  if (m.topK > m.numExperts)
    throw new ConfigError(`${field}.topK`, `${field}.topK must be ≤ numExperts (${m.numExperts}), got ${m.topK}`);
  if (m.nDenseLayers > nLayers)
    throw new ConfigError(
      `${field}.nDenseLayers`,
      `${field}.nDenseLayers must be ≤ nLayers (${nLayers}), got ${m.nDenseLayers}`,
    );
  return m;
}

/** mla: integers ≥ 1, qLoraRank ≥ 0 (0: one wq). */
const validateMla = (field: string, x: unknown): MlaArgs =>
  intRecord(field, x, MLA_FIELDS, (k) => (k === 'qLoraRank' ? 0 : 1), MAX_DIM);

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
  return {
    ...a,
    ...(o.moe === undefined ? {} : { moe: validateMoe(`${field}.moe`, o.moe, a.nLayers) }),
    ...(o.mla === undefined ? {} : { mla: validateMla(`${field}.mla`, o.mla) }),
  };
}
