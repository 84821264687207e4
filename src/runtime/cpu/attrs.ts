// Op attribute readers shared by the CPU and WGSL backends: each op's attrs parsed into typed
// dims, plus tensor-length checks, so both backends reject a malformed call the same way.
// Semantics follow src/graph/ops.ts; a tensor may be longer than the op needs (extra elements
// are left untouched), never shorter.

import { ConfigError } from '../../errors';
import { isMoeOp, type ComputeOp } from '../../graph';
import type { OpAttrs } from '../kernels';

/** A graph MoE op asked of a kernel backend: the executor's MoE runner (runtime/exec/moe_exec.ts) plans it. */
export const notAKernel = (op: string): ConfigError =>
  new ConfigError('op', `the MoE op ${op} is planned by the executor's MoE runner, which runs its MoE kernels instead`);

export interface MatmulDims {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
}
/** `vocabStart`: a vocabulary-sharded (TP) table holds ids [vocabStart, vocabStart + V); others read as zero rows. */
export interface EmbeddingDims {
  V: number;
  D: number;
  T: number;
  vocabStart?: number;
}
export interface RmsNormDims {
  rows: number;
  cols: number;
  eps: number;
}
export interface AttentionDims {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}
export interface CrossEntropyDims {
  T: number;
  V: number;
}
export interface AdamwAttrs {
  n: number;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

/** A positive integer attribute (`op.name`), else a ConfigError naming it. `op`: a ComputeOp or a MoE kernel op. */
export function intAttr(op: string, attrs: OpAttrs, name: string, min = 1): number {
  const v = attrs[name];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new ConfigError(`${op}.${name}`, `${op}.${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** A finite number attribute; `fallback` when absent (undefined fallback = required). */
function numAttr(op: ComputeOp, attrs: OpAttrs, name: string, fallback?: number): number {
  const v = attrs[name] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new ConfigError(`${op}.${name}`, `${op}.${name} must be a finite number, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** A boolean flag; absent = false. Accepts 0/1 too (graph dumps write numbers). */
function boolAttr(op: ComputeOp, attrs: OpAttrs, name: string): boolean {
  const v = attrs[name];
  if (v === undefined || v === false || v === 0) return false;
  if (v === true || v === 1) return true;
  throw new ConfigError(`${op}.${name}`, `${op}.${name} must be one of [true, false, 0, 1], got ${JSON.stringify(v)}`);
}

export const matmulDims = (a: OpAttrs): MatmulDims => ({
  M: intAttr('matmul', a, 'M'),
  N: intAttr('matmul', a, 'N'),
  K: intAttr('matmul', a, 'K'),
  transA: boolAttr('matmul', a, 'transA'),
  transB: boolAttr('matmul', a, 'transB'),
});

export const embeddingDims = (op: ComputeOp, a: OpAttrs): EmbeddingDims => ({
  V: intAttr(op, a, 'V'),
  D: intAttr(op, a, 'D'),
  T: intAttr(op, a, 'T'),
  ...(a.vocabStart === undefined ? {} : { vocabStart: intAttr(op, a, 'vocabStart', 0) }),
});

export const rmsNormDims = (op: ComputeOp, a: OpAttrs): RmsNormDims => ({
  rows: intAttr(op, a, 'rows'),
  cols: intAttr(op, a, 'cols'),
  eps: numAttr(op, a, 'eps', 1e-6),
});

export const attentionDims = (op: ComputeOp, a: OpAttrs): AttentionDims => {
  const d = {
    batch: intAttr(op, a, 'batch'),
    seq: intAttr(op, a, 'seq'),
    heads: intAttr(op, a, 'heads'),
    kvHeads: intAttr(op, a, 'kvHeads'),
    headDim: intAttr(op, a, 'headDim'),
  };
  if (d.kvHeads > d.heads) {
    throw new ConfigError(`${op}.kvHeads`, `${op}.kvHeads must be ≤ heads (${d.heads}), got ${d.kvHeads}`);
  }
  return d;
};

export const crossEntropyDims = (op: ComputeOp, a: OpAttrs): CrossEntropyDims => ({
  T: intAttr(op, a, 'T'),
  V: intAttr(op, a, 'V'),
});

export const adamwAttrs = (a: OpAttrs): AdamwAttrs => ({
  n: intAttr('adamw', a, 'n'),
  lr: numAttr('adamw', a, 'lr'),
  beta1: numAttr('adamw', a, 'beta1'),
  beta2: numAttr('adamw', a, 'beta2'),
  eps: numAttr('adamw', a, 'eps'),
  weightDecay: numAttr('adamw', a, 'weightDecay', 0),
});

/** 1-based AdamW step, else a ConfigError (the runtime must pass it). */
export function adamwStep(step: number | undefined): number {
  if (step === undefined || !Number.isInteger(step) || step < 1) {
    throw new ConfigError('adamw.step', `adamw.step must be an integer ≥ 1 (1-based), got ${JSON.stringify(step)}`);
  }
  return step;
}

/** Element counts each op expects, in [inputs, outputs] order (ops.ts). */
export function expectedLengths(op: ComputeOp, attrs: OpAttrs): { inputs: number[]; outputs: number[] } {
  if (isMoeOp(op)) throw notAKernel(op);
  switch (op) {
    case 'embedding': {
      const d = embeddingDims(op, attrs);
      return { inputs: [d.V * d.D, d.T], outputs: [d.T * d.D] };
    }
    case 'embedding_bwd': {
      const d = embeddingDims(op, attrs);
      return { inputs: [d.T * d.D, d.T], outputs: [d.V * d.D] };
    }
    case 'matmul': {
      const d = matmulDims(attrs);
      return { inputs: [d.M * d.K, d.K * d.N], outputs: [d.M * d.N] };
    }
    case 'rms_norm': {
      const d = rmsNormDims(op, attrs);
      const x = d.rows * d.cols;
      return { inputs: [x, d.cols], outputs: [x, d.rows] };
    }
    case 'rms_norm_bwd': {
      const d = rmsNormDims(op, attrs);
      const x = d.rows * d.cols;
      return { inputs: [x, x, d.cols, d.rows], outputs: [x, d.cols] };
    }
    case 'swiglu': {
      const n = intAttr(op, attrs, 'n');
      return { inputs: [n, n], outputs: [n] };
    }
    case 'swiglu_bwd': {
      const n = intAttr(op, attrs, 'n');
      return { inputs: [n, n, n], outputs: [n, n] };
    }
    case 'attention':
    case 'attention_bwd': {
      const d = attentionDims(op, attrs);
      const T = d.batch * d.seq;
      const q = T * d.heads * d.headDim;
      const kv = T * d.kvHeads * d.headDim;
      const lse = d.batch * d.heads * d.seq;
      return op === 'attention'
        ? { inputs: [q, kv, kv], outputs: [q, lse] }
        : { inputs: [q, q, kv, kv, q, lse], outputs: [q, kv, kv] };
    }
    case 'add': {
      const n = intAttr(op, attrs, 'n');
      return { inputs: [n, n], outputs: [n] };
    }
    case 'copy': {
      const n = intAttr(op, attrs, 'n');
      return { inputs: [n], outputs: [n] };
    }
    case 'cross_entropy': {
      const d = crossEntropyDims(op, attrs);
      return { inputs: [d.T * d.V, d.T], outputs: [1] };
    }
    case 'cross_entropy_bwd': {
      const d = crossEntropyDims(op, attrs);
      return { inputs: [d.T * d.V, d.T], outputs: [d.T * d.V] };
    }
    case 'adamw': {
      const n = adamwAttrs(attrs).n;
      return { inputs: [n, n, n, n], outputs: [n, n, n] };
    }
    default: {
      const never: never = op;
      throw new ConfigError('op', `unknown compute op ${JSON.stringify(never)}`);
    }
  }
}

/** The input slot holding int32 token ids (tokens / targets); every other tensor is f32. */
const I32_INPUT: Partial<Record<ComputeOp, number>> = {
  embedding: 1,
  embedding_bwd: 1,
  cross_entropy: 1,
  cross_entropy_bwd: 1,
};

/** Throws naming the op, the slot, the tensor id and both lengths when a tensor is too short or missing. */
export function checkTensors(
  op: ComputeOp,
  attrs: OpAttrs,
  inputs: readonly { id: string; length: number; type?: string }[],
  outputs: readonly { id: string; length: number }[],
): void {
  const want = expectedLengths(op, attrs);
  const i32Slot = I32_INPUT[op];
  inputs.forEach((t, i) => {
    const type = (t as { type?: string }).type;
    const need = i === i32Slot ? 'i32' : 'f32';
    if (type !== undefined && type !== need) {
      throw new ConfigError(`${op}.inputs[${i}]`, `${op} inputs[${i}] '${t.id}' must be ${need}, got ${type}`);
    }
  });
  const check = (kind: 'inputs' | 'outputs', got: readonly { id: string; length: number }[], need: number[]) => {
    if (got.length !== need.length) {
      throw new ConfigError(`${op}.${kind}`, `${op} needs ${need.length} ${kind}, got ${got.length}`);
    }
    need.forEach((n, i) => {
      if (got[i].length < n) {
        throw new ConfigError(
          `${op}.${kind}[${i}]`,
          `${op} ${kind}[${i}] '${got[i].id}' needs ≥ ${n} elements, got ${got[i].length}`,
        );
      }
    });
  };
  check('inputs', inputs, want.inputs);
  check('outputs', outputs, want.outputs);
}
