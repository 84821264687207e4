// CPU KernelBackend: runs every ComputeOp and MoE kernel op with the reference kernels on host arrays. It is the
// oracle for the WGSL kernels and the fallback when there is no WebGPU adapter.
import { ConfigError } from '../../errors';
import { isMoeOp, type ComputeOp } from '../../graph';
import type { DeviceTensor, ElemType, HostArray, KernelBackend, OpAttrs } from '../kernels';
import { adamw } from './adamw';
import { add } from './add';
import { isMoeKernelOp, runMoeCpuOp } from './moe_ops';
import { attention, attentionBwd } from './attention';
import {
  adamwAttrs,
  adamwStep,
  attentionDims,
  checkTensors,
  crossEntropyDims,
  embeddingDims,
  intAttr,
  matmulDims,
  notAKernel,
  rmsNormDims,
} from './attrs';
import { crossEntropy, crossEntropyBwd } from './cross_entropy';
import { embedding, embeddingBwd } from './embedding';
import { matmul } from './cpu_matmul';
import { rmsNorm, rmsNormBwd } from './rms_norm';
import { swiglu, swigluBwd } from './swiglu';

export interface CpuTensor extends DeviceTensor {
  readonly data: Float32Array | Int32Array;
}

function f32(t: DeviceTensor, op: ComputeOp, slot: string): Float32Array {
  const data = (t as CpuTensor).data;
  if (!(data instanceof Float32Array)) {
    throw new ConfigError(
      `${op}.${slot}`,
      `${op} ${slot} '${t.id}' must be an f32 tensor of this CPU backend, got ${t.type}`,
    );
  }
  return data;
}

function i32(t: DeviceTensor, op: ComputeOp, slot: string): Int32Array {
  const data = (t as CpuTensor).data;
  if (!(data instanceof Int32Array)) {
    throw new ConfigError(
      `${op}.${slot}`,
      `${op} ${slot} '${t.id}' must be an i32 tensor of this CPU backend, got ${t.type}`,
    );
  }
  return data;
}

/** Runs one op on host arrays; exported for tests and for the GPU tests' references. */
export function runCpuOp(
  op: ComputeOp,
  attrs: OpAttrs,
  inputs: readonly DeviceTensor[],
  outputs: readonly DeviceTensor[],
  step?: number,
): void {
  checkTensors(op, attrs, inputs, outputs);
  const fi = (i: number) => f32(inputs[i], op, `inputs[${i}]`);
  const fo = (i: number) => f32(outputs[i], op, `outputs[${i}]`);
  const ii = (i: number) => i32(inputs[i], op, `inputs[${i}]`);
  if (isMoeOp(op)) throw notAKernel(op);
  switch (op) {
    case 'embedding':
      return embedding(fi(0), ii(1), fo(0), embeddingDims(op, attrs));
    case 'embedding_bwd':
      return embeddingBwd(fi(0), ii(1), fo(0), embeddingDims(op, attrs));
    case 'matmul':
      return matmul(fi(0), fi(1), fo(0), matmulDims(attrs));
    case 'rms_norm':
      return rmsNorm(fi(0), fi(1), fo(0), fo(1), rmsNormDims(op, attrs));
    case 'rms_norm_bwd':
      return rmsNormBwd(fi(0), fi(1), fi(2), fi(3), fo(0), fo(1), rmsNormDims(op, attrs));
    case 'swiglu':
      return swiglu(fi(0), fi(1), fo(0), intAttr(op, attrs, 'n'));
    case 'swiglu_bwd':
      return swigluBwd(fi(0), fi(1), fi(2), fo(0), fo(1), intAttr(op, attrs, 'n'));
    case 'attention':
      return attention(fi(0), fi(1), fi(2), fo(0), fo(1), attentionDims(op, attrs));
    case 'attention_bwd':
      return attentionBwd(fi(0), fi(1), fi(2), fi(3), fi(4), fi(5), fo(0), fo(1), fo(2), attentionDims(op, attrs));
    case 'add':
      return add(fi(0), fi(1), fo(0), intAttr(op, attrs, 'n'));
    case 'copy':
      return fo(0).set(fi(0).subarray(0, intAttr(op, attrs, 'n')));
    case 'cross_entropy':
      return crossEntropy(fi(0), ii(1), fo(0), crossEntropyDims(op, attrs));
    case 'cross_entropy_bwd':
      return crossEntropyBwd(fi(0), ii(1), fo(0), crossEntropyDims(op, attrs));
    case 'adamw':
      return adamw(fi(0), fi(1), fi(2), fi(3), fo(0), fo(1), fo(2), adamwAttrs(attrs), adamwStep(step));
    default: {
      const never: never = op;
      throw new ConfigError('op', `unknown compute op ${JSON.stringify(never)}`);
    }
  }
}

function upload(t: DeviceTensor, data: HostArray, offset = 0): void {
  const dst = (t as CpuTensor).data;
  if (offset < 0 || offset + data.length > t.length) {
    throw new ConfigError(
      'upload',
      `upload into '${t.id}' of ${data.length} elements at offset ${offset} overflows its ${t.length} elements`,
    );
  }
  if (dst instanceof Float32Array !== data instanceof Float32Array) {
    throw new ConfigError('upload', `upload into '${t.id}' (${t.type}) got a ${data.constructor.name}`);
  }
  dst.set(data, offset);
}

export function createCpuKernels(): KernelBackend {
  return {
    kind: 'cpu',
    label: 'cpu reference',
    create(id: string, length: number, type: ElemType): CpuTensor {
      if (!Number.isInteger(length) || length < 0) {
        throw new ConfigError('length', `tensor '${id}' length must be an integer ≥ 0, got ${length}`);
      }
      if (type !== 'f32' && type !== 'i32') {
        throw new ConfigError('type', `tensor '${id}' type must be one of [f32, i32], got ${JSON.stringify(type)}`);
      }
      return { id, length, type, data: type === 'f32' ? new Float32Array(length) : new Int32Array(length) };
    },
    upload,
    async download(t: DeviceTensor, into: HostArray): Promise<void> {
      const src = (t as CpuTensor).data;
      into.set(src.subarray(0, Math.min(into.length, src.length)));
    },
    uploadScatter(src, parts): void {
      for (const p of parts) upload(p.t, src.subarray(p.from, p.from + p.length), p.at);
    },
    async downloadAll(parts): Promise<void> {
      for (const { t, into } of parts) into.set((t as CpuTensor).data.subarray(0, Math.min(into.length, t.length)));
    },
    run(op, attrs, inputs, outputs, step) {
      const data = (t: DeviceTensor) => (t as CpuTensor).data;
      if (isMoeKernelOp(op)) runMoeCpuOp(op, attrs, inputs.map(data), outputs.map(data));
      else runCpuOp(op, attrs, inputs, outputs, step);
    },
    async sync() {
      return undefined;
    },
    release() {}, // host arrays are garbage-collected; nothing to pool
    destroy() {},
  };
}
