// One MoE FFN layer, forward and backward, expert-parallel over `comm` (torchtitan's MoE with
// token-choice top-k routing and SwiGLU experts), on the CPU reference kernels:
//   logits = x·Wr → top-k gates → dispatch all-to-all → per local expert e: w2[e]·(silu(x·w1[e]) ⊙ x·w3[e])
//   → combine all-to-all → y[t] = Σ_i gate[t,i]·expert_out[t,i].
// The router is replicated (its gradient is this rank's part: all-reduce it, as any replicated
// weight); each rank holds experts [r·L, (r+1)·L) and gets their full gradient from its own backward.
// N ranks and one rank with every expert give the same numbers for the same global batch: each
// expert sees its rows in the same order either way (moe_dispatch.ts).

import { ConfigError } from '../errors';
import {
  combineRows,
  combineRowsBwd,
  gatherRows,
  groupedMatmul,
  groupedMatmulBwdW,
  groupedMatmulBwdX,
  matmul,
  moeRouter,
  moeRouterBwd,
  swiglu,
  swigluBwd,
} from './cpu';
import { exchangeRows, planDispatch, type DispatchPlan, type MoeComm } from './moe_dispatch';

export interface MoeDims {
  readonly tokens: number; // T: this rank's tokens
  readonly dim: number; // D: model width
  readonly hidden: number; // F: expert hidden width
  readonly experts: number; // E: global experts, a multiple of the expert ranks
  readonly topK: number; // k
}

/** This rank's weights (and, same shapes, gradients). */
export interface MoeWeights {
  readonly router: Float32Array; // [D, E], replicated
  readonly w1: Float32Array; // [L, D, F] local experts (gate projection)
  readonly w3: Float32Array; // [L, D, F] (up projection)
  readonly w2: Float32Array; // [L, F, D] (down projection)
}

/** What the backward needs from the forward. */
export interface MoeSaved {
  readonly x: Float32Array;
  readonly gates: Float32Array;
  readonly experts: Int32Array;
  readonly plan: DispatchPlan;
  readonly xe: Float32Array; // [R, D] local expert rows, expert-major
  readonly h1: Float32Array; // [R, F]
  readonly h3: Float32Array; // [R, F]
  readonly act: Float32Array; // [R, F] silu(h1)·h3
  readonly back: Float32Array; // [T·k, D] expert outputs returned, in this rank's expert order
}

const f32 = (n: number) => new Float32Array(n);

function checkMoeDims(d: MoeDims, ranks: number): void {
  if (!(d.experts % ranks === 0 && d.experts >= ranks)) {
    throw new ConfigError('experts', `experts must be a multiple of the ${ranks} expert ranks, got ${d.experts}`);
  }
  if (!(Number.isInteger(d.topK) && d.topK >= 1 && d.topK <= d.experts)) {
    throw new ConfigError('topK', `topK must be an integer in [1, experts=${d.experts}], got ${d.topK}`);
  }
}

/** y [T, D] for x [T, D]; `label` names this layer's all-to-alls. */
export function moeForward(
  comm: MoeComm,
  d: MoeDims,
  w: MoeWeights,
  x: Float32Array,
  label = 'moe',
): { readonly y: Float32Array; readonly saved: MoeSaved } {
  checkMoeDims(d, comm.worldSize);
  const { tokens: T, dim: D, experts: E, topK: k } = d;
  const logits = f32(T * E);
  matmul(x, w.router, logits, { M: T, N: E, K: D, transA: false, transB: false });
  const gates = f32(T * k);
  const experts = new Int32Array(T * k);
  moeRouter(logits, gates, experts, { tokens: T, experts: E, topK: k });
  const plan = planDispatch(comm, experts, T, k, E, label);
  const sorted = f32(T * k * D);
  gatherRows(x, plan.order.rowOf, sorted, { rows: T * k, cols: D, srcRows: T });
  const arrived = exchangeRows(comm, plan, sorted, D, 'dispatch', label);
  const R = plan.localRows;
  const xe = f32(R * D);
  gatherRows(arrived, plan.toExpertMajor, xe, { rows: R, cols: D, srcRows: R });
  const { h1, h3, act, ye } = expertsForward(d, w, plan, xe);
  const ys = f32(R * D);
  gatherRows(ye, plan.toSourceMajor, ys, { rows: R, cols: D, srcRows: R });
  const back = exchangeRows(comm, plan, ys, D, 'combine', label);
  const y = f32(T * D);
  combineRows(back, plan.order.posOf, gates, y, { tokens: T, topK: k, cols: D, srcRows: T * k });
  return { y, saved: { x, gates, experts, plan, xe, h1, h3, act, back } };
}

/** The local experts' SwiGLU FFN over their contiguous row ranges. */
function expertsForward(d: MoeDims, w: MoeWeights, plan: DispatchPlan, xe: Float32Array) {
  const R = plan.localRows;
  const L = plan.localOffsets.length - 1;
  const up = { rows: R, experts: L, K: d.dim, N: d.hidden };
  const h1 = f32(R * d.hidden),
    h3 = f32(R * d.hidden),
    act = f32(R * d.hidden),
    ye = f32(R * d.dim);
  groupedMatmul(xe, w.w1, plan.localOffsets, h1, up);
  groupedMatmul(xe, w.w3, plan.localOffsets, h3, up);
  swiglu(h1, h3, act, R * d.hidden);
  groupedMatmul(act, w.w2, plan.localOffsets, ye, { rows: R, experts: L, K: d.hidden, N: d.dim });
  return { h1, h3, act, ye };
}

/** dx [T, D] and this rank's gradients for dy [T, D] (the router's: this rank's part, to be all-reduced). */
export function moeBackward(
  comm: MoeComm,
  d: MoeDims,
  w: MoeWeights,
  saved: MoeSaved,
  dy: Float32Array,
  label = 'moe',
): { readonly dx: Float32Array; readonly grads: MoeWeights } {
  const { tokens: T, dim: D, experts: E, topK: k } = d;
  const { plan, gates } = saved;
  const R = plan.localRows;
  const dBack = f32(T * k * D),
    dGates = f32(T * k);
  const combined = { tokens: T, topK: k, cols: D, srcRows: T * k };
  combineRowsBwd(dy, saved.back, plan.order.posOf, gates, dBack, dGates, combined);
  const dys = exchangeRows(comm, plan, dBack, D, 'dispatch', `${label} bwd`); // the combine's way, reversed
  const dye = f32(R * D);
  gatherRows(dys, plan.toExpertMajor, dye, { rows: R, cols: D, srcRows: R }); // toSourceMajor's inverse
  const { dxe, w1, w3, w2 } = expertsBackward(d, w, saved, dye);
  const dArrived = f32(R * D);
  gatherRows(dxe, plan.toSourceMajor, dArrived, { rows: R, cols: D, srcRows: R });
  const dSorted = exchangeRows(comm, plan, dArrived, D, 'combine', `${label} bwd`);
  const dx = f32(T * D);
  combineRows(dSorted, plan.order.posOf, null, dx, combined);
  const dLogits = f32(T * E);
  moeRouterBwd(dGates, gates, saved.experts, dLogits, { tokens: T, experts: E, topK: k });
  const router = f32(D * E);
  matmul(saved.x, dLogits, router, { M: D, N: E, K: T, transA: true, transB: false });
  const dxRouter = f32(T * D);
  matmul(dLogits, w.router, dxRouter, { M: T, N: D, K: E, transA: false, transB: true });
  for (let i = 0; i < T * D; i++) dx[i] += dxRouter[i];
  return { dx, grads: { router, w1, w3, w2 } };
}

/** The local experts' backward: dW1, dW3, dW2 and the gradient of their input rows. */
function expertsBackward(d: MoeDims, w: MoeWeights, s: MoeSaved, dye: Float32Array) {
  const R = s.plan.localRows;
  const L = s.plan.localOffsets.length - 1;
  const offsets = s.plan.localOffsets;
  const up = { rows: R, experts: L, K: d.dim, N: d.hidden };
  const down = { rows: R, experts: L, K: d.hidden, N: d.dim };
  const dAct = f32(R * d.hidden),
    w2 = f32(w.w2.length);
  groupedMatmulBwdX(dye, w.w2, offsets, dAct, down);
  groupedMatmulBwdW(dye, s.act, offsets, w2, down);
  const dh1 = f32(R * d.hidden),
    dh3 = f32(R * d.hidden);
  swigluBwd(dAct, s.h1, s.h3, dh1, dh3, R * d.hidden);
  const dxe = f32(R * d.dim),
    dxe3 = f32(R * d.dim),
    w1 = f32(w.w1.length),
    w3 = f32(w.w3.length);
  groupedMatmulBwdX(dh1, w.w1, offsets, dxe, up);
  groupedMatmulBwdX(dh3, w.w3, offsets, dxe3, up);
  for (let i = 0; i < dxe.length; i++) dxe[i] += dxe3[i];
  groupedMatmulBwdW(dh1, s.xe, offsets, w1, up);
  groupedMatmulBwdW(dh3, s.xe, offsets, w3, up);
  return { dxe, w1, w3, w2 };
}
