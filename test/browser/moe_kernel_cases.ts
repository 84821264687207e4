// Seeded cases for the MoE kernel ops (src/runtime/cpu/moe_ops.ts), with odd sizes (23, 37, 45)
// so no workgroup divides them, an expert with no rows, and router logits full of exact ties.
// Indices come from the CPU router and expert order, as the layer builds them.
import { expertOrder, moeRouter, type MoeKernelOp } from '../../src/runtime/cpu';
import type { HostArray, OpAttrs } from '../../src/runtime/kernels';
import { randF32, randI32, rng } from './kernel_check';

export interface MoeCase {
  readonly name: string;
  readonly op: MoeKernelOp;
  readonly attrs: OpAttrs;
  readonly inputs: readonly HostArray[];
  readonly outputs: readonly { readonly length: number; readonly type: 'f32' | 'i32' }[];
  /** [abs, eps] per f32 output; i32 outputs must be equal. */
  readonly tol: readonly (readonly [number, number])[];
}

const F32 = (length: number) => ({ length, type: 'f32' as const });
const TOL: [number, number] = [1e-5, 1e-4];

function routed(T: number, E: number, k: number, r: () => number, ties: boolean) {
  const logits = randF32(T * E, r, 3).map((x) => (ties ? Math.round(x) : x)); // ties: integers in [-3, 3]
  const gates = new Float32Array(T * k),
    experts = new Int32Array(T * k);
  moeRouter(logits, gates, experts, { tokens: T, experts: E, topK: k });
  return { logits, gates, experts, order: expertOrder(experts, T, k, E) };
}

export function routerCases(seed: number): MoeCase[] {
  const r = rng(seed);
  return [false, true].flatMap((ties): MoeCase[] => {
    const attrs = { tokens: 37, experts: 6, topK: 3 };
    const { logits, gates, experts } = routed(attrs.tokens, attrs.experts, attrs.topK, r, ties);
    const picks = attrs.tokens * attrs.topK;
    const tag = ties ? ' (integer logits: ties)' : '';
    return [
      {
        name: `moe_router${tag}`,
        op: 'moe_router',
        attrs,
        inputs: [logits],
        outputs: [F32(picks), { length: picks, type: 'i32' }],
        tol: [[1e-6, 1e-5]],
      },
      {
        name: `moe_router_bwd${tag}`,
        op: 'moe_router_bwd',
        attrs,
        inputs: [randF32(picks, r), gates, experts],
        outputs: [F32(attrs.tokens * attrs.experts)],
        tol: [TOL],
      },
    ];
  });
}

export function rowCases(seed: number): MoeCase[] {
  const r = rng(seed);
  const T = 23,
    E = 5,
    k = 2,
    D = 37;
  const { gates, order } = routed(T, E, k, r, false);
  const P = T * k;
  const rows = { tokens: T, topK: k, cols: D, srcRows: P };
  const src = randF32(P * D, r);
  return [
    {
      name: 'gather_rows',
      op: 'gather_rows',
      attrs: { rows: P, cols: D, srcRows: T },
      inputs: [randF32(T * D, r), order.rowOf],
      outputs: [F32(P * D)],
      tol: [[0, 0]],
    },
    {
      name: 'gather_rows (random index)',
      op: 'gather_rows',
      attrs: { rows: 45, cols: 13, srcRows: 29 },
      inputs: [randF32(29 * 13, r), randI32(45, r, 29)],
      outputs: [F32(45 * 13)],
      tol: [[0, 0]],
    },
    {
      name: 'scatter_add_rows',
      op: 'scatter_add_rows',
      attrs: rows,
      inputs: [src, order.posOf],
      outputs: [F32(T * D)],
      tol: [TOL],
    },
    {
      name: 'combine_rows',
      op: 'combine_rows',
      attrs: rows,
      inputs: [src, order.posOf, gates],
      outputs: [F32(T * D)],
      tol: [TOL],
    },
    {
      name: 'combine_rows_bwd',
      op: 'combine_rows_bwd',
      attrs: rows,
      inputs: [randF32(T * D, r), src, order.posOf, gates],
      outputs: [F32(P * D), F32(P)],
      tol: [TOL, TOL],
    },
  ];
}

export function groupedMatmulCases(seed: number): MoeCase[] {
  const r = rng(seed);
  const attrs = { rows: 45, experts: 4, K: 23, N: 37 };
  const offsets = Int32Array.from([0, 10, 10, 30, 45]); // expert 1 has no rows
  const x = randF32(attrs.rows * attrs.K, r),
    w = randF32(attrs.experts * attrs.K * attrs.N, r);
  const dy = randF32(attrs.rows * attrs.N, r);
  return [
    {
      name: 'grouped_matmul',
      op: 'grouped_matmul',
      attrs,
      inputs: [x, w, offsets],
      outputs: [F32(attrs.rows * attrs.N)],
      tol: [TOL],
    },
    {
      name: 'grouped_matmul_bwd_x',
      op: 'grouped_matmul_bwd_x',
      attrs,
      inputs: [dy, w, offsets],
      outputs: [F32(attrs.rows * attrs.K)],
      tol: [TOL],
    },
    {
      name: 'grouped_matmul_bwd_w',
      op: 'grouped_matmul_bwd_w',
      attrs,
      inputs: [dy, x, offsets],
      outputs: [F32(attrs.experts * attrs.K * attrs.N)],
      tol: [TOL],
    },
  ];
}
