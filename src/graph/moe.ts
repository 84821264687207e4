// The MoE feed-forward of one block (torchtitan models/common/moe.py MoE.forward): a token-choice
// top-k router, dispatch to the experts, grouped GEMMs over each rank's E / ep experts, combine,
// and the shared experts, summed. With expert parallel (ep > 1) dispatch and combine are
// all_to_all_single on the ep group, as torchtitan's AllToAllTokenDispatcher runs them: first the
// per-expert token counts (E integers), then the token rows; each side permutes rows locally.
//
// Routing model: every rank routes its T tokens to k experts, T·k rows of D. Balanced, each ep
// rank receives T·k rows back; under imbalance the busiest rank receives ⌈T·k·min(imbalance, ep)⌉.
// The graph is that rank's program: its grouped GEMMs and the all-to-alls it takes part in are the
// ones every rank waits for at the combine. torchtitan's D2H sync on the counts (.tolist()) and
// the router's fp32 autocast are not modelled.
//
// Tensor parallel with sequence parallel (torchtitan/models/common/moe_sharding.py
// set_moe_sharding_config, b5bcd76): the block hands the MoE its sequence shard [T/tp, D].
// - ep > 1: the router (gate Replicate) routes the rank's own T/tp tokens, the routed experts are
//   split over ep only and the all-to-alls carry the local tokens; the output stays a sequence shard.
// - ep = 1: the input is all-gathered on tp (every rank routes all T tokens), the routed experts are
//   split on F (w1/w3 Shard(1), w2 Shard(2)), so the combined output is a partial sum, reduce-scattered.
// The shared experts are a TP FFN either way: input replicated (gathered), w1/w3 colwise, w2 rowwise,
// reduce-scattered. Routed and shared outputs are each reduce-scattered to the sequence shard (their
// configs' out_dst_shardings), then added.

import { EXPERT_WEIGHTS } from '../model';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes, matmulFlops } from './flops';
import { emitCollective, emitReduceScatter, gradId } from './fsdp';
import { param } from './forward';
import { epDegree } from './mesh';
import { type BlockTape, tapeAdd, tapeFeedForward, tapeLinear, tapeSwiglu } from './tape';
import { tapeSeqGather, tapeSeqReduceScatter, tpDegree } from './tp';

/**
 * Rows of D each rank's experts compute on: T·k balanced, ⌈T·k·imbalance⌉ on the busiest rank,
 * the imbalance capped at ep (that rank then receives every routed token of the group).
 */
function routedRows(tokens: number, topK: number, ep: number, imbalance: number): number {
  return Math.ceil(tokens * topK * Math.min(imbalance, ep));
}

interface Routing {
  readonly scores: string; // fp32 [T, k]
  readonly ids: string; // i32 [T, k]
  readonly counts: string; // i32 [E]: tokens per expert (torchtitan num_local_tokens_per_expert)
  readonly tokens: number; // T: the rows routed (the rank's tokens, or its sequence shard's)
}

/** gate → softmax → top k (router_topk); the gate's gradient comes back through the scores. */
function emitRouter(t: BlockTape, p: string, x: string): Routing {
  const { e } = t;
  const moe = t.c.args.moe!;
  const T = e.tensors[x].shape[0];
  const E = moe.numExperts;
  const k = moe.topK;
  const logits = tapeLinear(t, `${p}.moe.router.gate.weight`, `${p}.moe.router.gate`, x, E, t.c.args.dim);
  const name = t.name(`${p}.moe.router.topk`);
  const scores = e.tensor(`${name}.scores`, [T, k], 'fp32');
  const ids = e.tensor(`${name}.ids`, [T, k], 'i32');
  const counts = e.tensor(`${name}.counts`, [E], 'i32');
  e.node({
    name,
    kind: 'compute',
    op: 'router_topk',
    inputs: [logits],
    outputs: [scores, ids, counts],
    flops: EW.router_topk * T * E,
    bytesMoved: ioBytes(e.tensors, [logits, scores, ids, counts]),
    attrs: { T, E, k },
  });
  t.record(() => {
    const dLogits = e.tensor(`${name}.bwd`, [T, E], e.tensors[logits].dtype);
    const inputs = [t.grad(scores), logits, ids];
    e.node({
      name: `${name}.bwd`,
      kind: 'compute',
      op: 'router_topk_bwd',
      inputs,
      outputs: [dLogits],
      flops: EW.router_topk * T * E,
      bytesMoved: ioBytes(e.tensors, [...inputs, dLogits]),
      attrs: { T, E, k },
    });
    t.accumulate(logits, dLogits, `${name}.bwd`);
  });
  return { scores, ids, counts, tokens: T };
}

/**
 * Rows of x gathered in routing order (moe_permute): no flops, reads and writes the rows.
 * `received`: it reads or writes the rows an all-to-all brought, whose count is data-dependent
 * (graph_trainer's cudagraph pass leaves such ops out of its graphs: estimate/compute.ts).
 */
function permute(t: BlockTape, base: string, x: string, ids: string, rowsOut: number, received = false): string {
  const { e } = t;
  const name = t.name(base);
  const [rowsIn, D] = e.tensors[x].shape;
  const y = e.tensor(name, [rowsOut, D], e.tensors[x].dtype);
  e.node({
    name,
    kind: 'compute',
    op: 'moe_permute',
    inputs: [x, ids],
    outputs: [y],
    bytesMoved: ioBytes(e.tensors, [x, ids, y]),
    attrs: received ? { rowsIn, rowsOut, D, dynamicShape: true } : { rowsIn, rowsOut, D },
  });
  return y;
}

/** Rows summed back in token order (moe_scatter_add), weighted by `scores` when given. */
function scatterAdd(t: BlockTape, base: string, y: string, ids: string, rowsOut: number, scores?: string): string {
  const { e } = t;
  const name = t.name(base);
  const [rowsIn, D] = e.tensors[y].shape;
  const out = e.tensor(name, [rowsOut, D], e.tensors[y].dtype);
  const inputs = scores === undefined ? [y, ids] : [y, ids, scores];
  e.node({
    name,
    kind: 'compute',
    op: 'moe_scatter_add',
    inputs,
    outputs: [out],
    flops: (scores === undefined ? 1 : 2) * rowsIn * D,
    bytesMoved: ioBytes(e.tensors, [...inputs, out]),
    attrs: { rowsIn, rowsOut, D, k: rowsIn / rowsOut },
  });
  return out;
}

/** all_to_all_single on ep of [rows, D] → [rowsOut, D]. */
function allToAll(t: BlockTape, base: string, x: string, rowsOut: number): string {
  const src = t.e.tensors[x];
  const name = t.name(base);
  return emitCollective(t.c, {
    name,
    kind: 'all_to_all',
    dim: 'ep',
    input: x,
    outShape: [rowsOut, ...src.shape.slice(1)],
    dtype: src.dtype,
    out: `${name}.out`,
  });
}

/**
 * Token rows to this rank's experts: permute by destination, (ep > 1) the count exchange and the
 * token all-to-all, then permute into expert order. Backward: the mirror image.
 */
function emitDispatch(t: BlockTape, p: string, x: string, r: Routing, R: number): string {
  const T = r.tokens;
  const k = t.c.args.moe!.topK;
  const E = t.c.args.moe!.numExperts;
  const ep = epDegree(t.c.mesh!);
  const sent = permute(t, `${p}.moe.dispatch.permute`, x, r.ids, T * k);
  const toTokens = (d: string) => scatterAdd(t, `${p}.moe.dispatch.bwd`, d, r.ids, T);
  if (ep === 1) {
    t.record(() => t.accumulate(x, toTokens(t.grad(sent)), `${p}.moe.dispatch`));
    return sent;
  }
  allToAll(t, `${p}.moe.dispatch.counts.all_to_all`, r.counts, E);
  const received = allToAll(t, `${p}.moe.dispatch.all_to_all`, sent, R);
  const routed = permute(t, `${p}.moe.dispatch.sort`, received, r.ids, R, true);
  t.record(() => {
    const back = permute(t, `${p}.moe.dispatch.sort.bwd`, t.grad(routed), r.ids, R, true);
    const returned = allToAll(t, `${p}.moe.dispatch.all_to_all.bwd`, back, T * k);
    t.accumulate(x, toTokens(returned), `${p}.moe.dispatch`);
  });
  return routed;
}

/** Expert outputs back to their tokens, weighted by the router scores (scatter_add). */
function emitCombine(t: BlockTape, p: string, y: string, r: Routing, R: number): string {
  const { e } = t;
  const T = r.tokens;
  const D = t.c.args.dim;
  const k = t.c.args.moe!.topK;
  const ep = epDegree(t.c.mesh!);
  const unsorted = ep === 1 ? y : permute(t, `${p}.moe.combine.unsort`, y, r.ids, R, true);
  const back = ep === 1 ? y : allToAll(t, `${p}.moe.combine.all_to_all`, unsorted, T * k);
  const base = `${p}.moe.combine`;
  const name = t.name(base);
  const out = scatterAdd(t, base, back, r.ids, T, r.scores);
  t.record(() => {
    const dBack = e.tensor(`${name}.bwd`, [T * k, D], e.tensors[back].dtype);
    const dScores = e.tensor(`${name}.bwd.scores`, [T, k], 'fp32');
    const inputs = [t.grad(out), back, r.scores, r.ids];
    e.node({
      name: `${name}.bwd`,
      kind: 'compute',
      op: 'moe_combine_bwd',
      inputs,
      outputs: [dBack, dScores],
      flops: 3 * T * k * D,
      bytesMoved: ioBytes(e.tensors, [...inputs, dBack, dScores]),
      attrs: { T, D, k },
    });
    t.accumulate(r.scores, dScores, `${name}.bwd`);
    if (ep === 1) return t.accumulate(y, dBack, `${name}.bwd`);
    const dUnsorted = allToAll(t, `${base}.all_to_all.bwd`, dBack, R);
    t.accumulate(y, permute(t, `${base}.unsort.bwd`, dUnsorted, r.ids, R, true), `${name}.unsort.bwd`);
  });
  return out;
}

/** C[R,N] = x[R,K]·W_eᵀ over this rank's experts (W [E/ep, N, K]); backward as a linear's. */
function groupedLinear(t: BlockTape, fqn: string, base: string, x: string, N: number, K: number): string {
  const { c, e } = t;
  const name = t.name(base);
  const R = e.tensors[x].shape[0];
  const dt = c.paramDtype;
  const sp = param(c, fqn);
  const groups = sp.rows;
  const w = t.forwardWeight(fqn);
  type Mm = { name: string; a: string; b: string; M: number; N: number; K: number; transA?: boolean; transB?: boolean };
  const mm = (o: Mm) => {
    const shape = o.transA ? [groups, o.M, o.N] : [o.M, o.N];
    const out = e.tensor(o.name, shape, dt);
    e.node({
      name: o.name,
      kind: 'compute',
      op: 'grouped_mm',
      inputs: [o.a, o.b],
      outputs: [out],
      params: [fqn],
      flops: matmulFlops(o.M, o.N, o.K), // the rows split over the groups: 2·R·N·K in all
      bytesMoved: ioBytes(e.tensors, [o.a, o.b, out]),
      attrs: { M: o.M, N: o.N, K: o.K, groups, transA: !!o.transA, transB: o.transB ?? !o.transA },
    });
    return out;
  };
  const y = mm({ name, a: x, b: w, M: R, N, K });
  t.record(() => {
    const dY = t.grad(y);
    mm({ name: gradId(fqn), a: dY, b: x, M: N, N: K, K: R, transA: true });
    const wb = t.backwardWeight(fqn);
    // dX = dY·W_e: W [E, N, K] is read as it is stored
    const dX = mm({ name: `${name}.bwd`, a: dY, b: wb, M: R, N: K, K: N, transB: false });
    emitReduceScatter(c, sp);
    t.accumulate(x, dX, `${name}.bwd`);
  });
  return y;
}

/** The routed experts on the rows x [T, D]: router, dispatch, grouped GEMMs (F split by tp when ep = 1), combine. */
function emitRoutedExperts(t: BlockTape, p: string, x: string): string {
  const moe = t.c.args.moe!;
  const D = t.c.args.dim;
  const ep = epDegree(t.c.mesh!);
  const F = ep > 1 ? moe.moeFfnDim : moe.moeFfnDim / tpDegree(t.c);
  const r = emitRouter(t, p, x);
  const R = routedRows(r.tokens, moe.topK, ep, t.c.moeLoadImbalance ?? 1);
  const routed = emitDispatch(t, p, x, r, R);
  const ex = (w: keyof typeof EXPERT_WEIGHTS) => `${p}.${EXPERT_WEIGHTS[w]}`;
  const h1 = groupedLinear(t, ex('w1'), `${p}.moe.experts.w1`, routed, F, D);
  const h3 = groupedLinear(t, ex('w3'), `${p}.moe.experts.w3`, routed, F, D);
  const g = tapeSwiglu(t, `${p}.moe.experts.swiglu`, h1, h3);
  const y = groupedLinear(t, ex('w2'), `${p}.moe.experts.w2`, g, D, F);
  return emitCombine(t, p, y, r, R);
}

/**
 * The MoE feed-forward on the normed input x [T, D] (its sequence shard [T/tp, D] under TP):
 * routed experts plus shared experts, the output in x's layout.
 */
export function emitMoe(t: BlockTape, layer: number, x: string): string {
  const moe = t.c.args.moe!;
  const p = `layers.${layer}`;
  const ep = epDegree(t.c.mesh!);
  // ep = 1: the MoE boundary replicates its input (moe_sharding.py _moe_sharding_config)
  const xFull = ep > 1 ? x : tapeSeqGather(t, `${p}.moe`, x);
  const routedOut = emitRoutedExperts(t, p, ep > 1 ? x : xFull);
  const routed = ep > 1 ? routedOut : tapeSeqReduceScatter(t, `${p}.moe.routed_experts`, routedOut);
  if (moe.numSharedExperts === 0) return routed;
  // the shared experts gather their own input under ep > 1 (_shared_experts_sharding_configs)
  const sharedIn = ep > 1 ? tapeSeqGather(t, `${p}.moe.shared_experts`, x) : xFull;
  const F = (moe.moeFfnDim * moe.numSharedExperts) / tpDegree(t.c);
  const sharedOut = tapeFeedForward(t, `${p}.moe.shared_experts`, sharedIn, F);
  const shared = tapeSeqReduceScatter(t, `${p}.moe.shared_experts.w2`, sharedOut);
  return tapeAdd(t, `${p}.moe.sum`, routed, shared);
}
