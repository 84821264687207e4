// The MoE kernels as ops with attrs, like the ComputeOps of src/graph/ops.ts: one name per kernel,
// its attrs parsed into dims, and the CPU runner over host arrays (the reference the WGSL runner,
// gpu/gpu_moe.ts, is checked against). Both kernel backends run them as ordinary ops of `run`
// (the CPU one here, the WebGPU one through planMoeOp). Inputs and outputs are listed in the order each
// case below takes them.
import { ConfigError } from '../../errors';
import type { HostArray, OpAttrs } from '../kernels';
import { intAttr } from './attrs';
import { checkMoeLength } from './moe_checks';
import { groupedMatmul, groupedMatmulBwdW, groupedMatmulBwdX, type GroupedMatmulDims } from './grouped_matmul';
import { moeRouter, moeRouterBwd, type RouterDims } from './moe_router';
import { combineRows, combineRowsBwd, gatherRows, type CombineDims, type GatherDims } from './moe_rows';

const MOE_KERNEL_OPS = [
  'moe_router', // [logits] → [gates, experts(i32)]
  'moe_router_bwd', // [dGates, gates, experts(i32)] → [dLogits]
  'gather_rows', // [src, index(i32)] → [dst]
  'scatter_add_rows', // [src, posOf(i32)] → [dst]: gather_rows' backward
  'combine_rows', // [src, posOf(i32), gates] → [dst]
  'combine_rows_bwd', // [dDst, src, posOf(i32), gates] → [dSrc, dGates]
  'grouped_matmul', // [x, w, offsets(i32)] → [y]
  'grouped_matmul_bwd_x', // [dy, w, offsets(i32)] → [dx]
  'grouped_matmul_bwd_w', // [dy, x, offsets(i32)] → [dw]
] as const;
export type MoeKernelOp = (typeof MOE_KERNEL_OPS)[number];

const MOE_KERNEL_OP_SET: ReadonlySet<string> = new Set(MOE_KERNEL_OPS);
/** Whether a kernel op is one of the MoE kernels (else a ComputeOp of src/graph/ops.ts). */
export const isMoeKernelOp = (op: string): op is MoeKernelOp => MOE_KERNEL_OP_SET.has(op);

export const routerDims = (op: MoeKernelOp, a: OpAttrs): RouterDims => ({
  tokens: intAttr(op, a, 'tokens', 0),
  experts: intAttr(op, a, 'experts'),
  topK: intAttr(op, a, 'topK'),
});
export const gatherDims = (op: MoeKernelOp, a: OpAttrs): GatherDims => ({
  rows: intAttr(op, a, 'rows', 0),
  cols: intAttr(op, a, 'cols'),
  srcRows: intAttr(op, a, 'srcRows', 0),
});
export const combineDims = (op: MoeKernelOp, a: OpAttrs): CombineDims => ({
  tokens: intAttr(op, a, 'tokens', 0),
  topK: intAttr(op, a, 'topK'),
  cols: intAttr(op, a, 'cols'),
  srcRows: intAttr(op, a, 'srcRows', 0),
});
export const groupedMatmulDims = (op: MoeKernelOp, a: OpAttrs): GroupedMatmulDims => ({
  rows: intAttr(op, a, 'rows', 0),
  experts: intAttr(op, a, 'experts'),
  K: intAttr(op, a, 'K'),
  N: intAttr(op, a, 'N'),
});

/** The fewest elements each input and output of `op` must hold (slots in MOE_KERNEL_OPS order). */
export function moeTensorLengths(op: MoeKernelOp, a: OpAttrs): { inputs: number[]; outputs: number[] } {
  switch (op) {
    case 'moe_router':
    case 'moe_router_bwd': {
      const { tokens: T, experts: E, topK: k } = routerDims(op, a);
      return op === 'moe_router'
        ? { inputs: [T * E], outputs: [T * k, T * k] }
        : { inputs: [T * k, T * k, T * k], outputs: [T * E] };
    }
    case 'gather_rows': {
      const d = gatherDims(op, a);
      return { inputs: [d.srcRows * d.cols, d.rows], outputs: [d.rows * d.cols] };
    }
    case 'scatter_add_rows':
    case 'combine_rows':
    case 'combine_rows_bwd': {
      const { tokens: T, topK: k, cols, srcRows } = combineDims(op, a);
      const [src, picks, dst] = [srcRows * cols, T * k, T * cols];
      if (op === 'combine_rows_bwd') return { inputs: [dst, src, picks, picks], outputs: [src, picks] };
      return { inputs: op === 'combine_rows' ? [src, picks, picks] : [src, picks], outputs: [dst] };
    }
    case 'grouped_matmul':
    case 'grouped_matmul_bwd_x':
    case 'grouped_matmul_bwd_w': {
      const { rows, experts, K, N } = groupedMatmulDims(op, a);
      const [x, w, y, offsets] = [rows * K, experts * K * N, rows * N, experts + 1];
      if (op === 'grouped_matmul') return { inputs: [x, w, offsets], outputs: [y] };
      return op === 'grouped_matmul_bwd_x'
        ? { inputs: [y, w, offsets], outputs: [x] }
        : { inputs: [y, x, offsets], outputs: [w] };
    }
  }
}

/** Each tensor of `op` holds at least what its slot needs (the WGSL kernels would clamp a short one). */
export function checkMoeTensors(
  op: MoeKernelOp,
  attrs: OpAttrs,
  ins: readonly { readonly length: number }[],
  outs: readonly { readonly length: number }[],
): void {
  const want = moeTensorLengths(op, attrs);
  want.inputs.forEach((n, i) => checkMoeLength(`${op}.inputs[${i}]`, ins[i] ?? [], n));
  want.outputs.forEach((n, i) => checkMoeLength(`${op}.outputs[${i}]`, outs[i] ?? [], n));
}

/** arrays[i] as f32 (or i32), else a ConfigError naming the op and the slot. */
function typed<T extends HostArray>(
  arrays: readonly HostArray[],
  i: number,
  op: string,
  slot: string,
  f32: boolean,
): T {
  const a = arrays[i];
  if (!(f32 ? a instanceof Float32Array : a instanceof Int32Array)) {
    throw new ConfigError(`${op}.${slot}[${i}]`, `${op} ${slot}[${i}] must be ${f32 ? 'f32' : 'i32'}`);
  }
  return a as T;
}

/** Runs one MoE kernel op on host arrays. */
export function runMoeCpuOp(
  op: MoeKernelOp,
  attrs: OpAttrs,
  ins: readonly HostArray[],
  outs: readonly HostArray[],
): void {
  const f = (i: number) => typed<Float32Array>(ins, i, op, 'inputs', true);
  const n = (i: number) => typed<Int32Array>(ins, i, op, 'inputs', false);
  const o = (i: number) => typed<Float32Array>(outs, i, op, 'outputs', true);
  switch (op) {
    case 'moe_router':
      return moeRouter(f(0), o(0), typed(outs, 1, op, 'outputs', false), routerDims(op, attrs));
    case 'moe_router_bwd':
      return moeRouterBwd(f(0), f(1), n(2), o(0), routerDims(op, attrs));
    case 'gather_rows':
      return gatherRows(f(0), n(1), o(0), gatherDims(op, attrs));
    case 'scatter_add_rows':
      return combineRows(f(0), n(1), null, o(0), combineDims(op, attrs));
    case 'combine_rows':
      return combineRows(f(0), n(1), f(2), o(0), combineDims(op, attrs));
    case 'combine_rows_bwd':
      return combineRowsBwd(f(0), f(1), n(2), f(3), o(0), o(1), combineDims(op, attrs));
    case 'grouped_matmul':
      return groupedMatmul(f(0), f(1), n(2), o(0), groupedMatmulDims(op, attrs));
    case 'grouped_matmul_bwd_x':
      return groupedMatmulBwdX(f(0), f(1), n(2), o(0), groupedMatmulDims(op, attrs));
    case 'grouped_matmul_bwd_w':
      return groupedMatmulBwdW(f(0), f(1), n(2), o(0), groupedMatmulDims(op, attrs));
    default: {
      const never: never = op;
      throw new ConfigError('op', `op must be one of [${MOE_KERNEL_OPS.join(', ')}], got ${JSON.stringify(never)}`);
    }
  }
}
