// Backward pass in reverse program order, as aot_autograd would trace it: per op its gradient
// ops; a parameter whose value the backward reads is re-gathered when SimpleFSDP reshards after
// forward (else the forward's gathered copy is read: recompute_plan.ts); each weight gradient is
// reduce-scattered right after it is made; residual gradients accumulate with `add`. Matmul
// conventions (ops.ts): dX = dY·W is plain, dW = dYᵀ·X is {transA} with dY stored [T, out] = [K, M].
// With tensor parallel (tp.ts) each sequence-parallel collective of the forward is mirrored: a
// forward all-gather's gradient is reduce-scattered on tp, a forward reduce-scatter's all-gathered.

import { headDim } from '../model';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes } from './flops';
import { emitAdd, emitAttentionBwd, emitMatmul, emitRmsNormBwd, emitSwigluBwd } from './emit_ops';
import { emitBlockRecompute, emitBlockRegather } from './checkpoint';
import { emitReduceScatter, gradId } from './fsdp';
import {
  backwardWeight,
  localDims,
  lossAttrs,
  param,
  seqShardRows,
  tokensPerRank,
  type ForwardSaved,
  type LayerSaved,
  type ModelCtx,
} from './forward';
import { emitTapeRecomputeBackward } from './tape_recompute';
import { TARGETS, TOKENS } from './ops';
import { emitGradAllReduce, emitSeqGather, emitSeqReduceScatter, partialGradId } from './tp';

export function emitBackward(c: ModelCtx, s: ForwardSaved): void {
  c.e.phase = 'backward';
  c.e.layer = undefined;
  const dx = emitBlocksBackward(c, s, emitHeadBackward(c, s));
  emitEmbeddingBackward(c, dx);
}

/** The loss, the output projection and the final norm, backward: the gradient entering the last block. */
function emitHeadBackward(c: ModelCtx, s: ForwardSaved): string {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const Ts = seqShardRows(c);
  const D = args.dim;
  const { V } = localDims(c);

  const dLogits = e.tensor('loss.bwd', [T, V], dt);
  e.node({
    name: 'loss.bwd',
    kind: 'compute',
    op: 'cross_entropy_bwd',
    inputs: [s.logits, TARGETS],
    outputs: [dLogits],
    flops: EW.cross_entropy_bwd * T * V,
    bytesMoved: ioBytes(e.tensors, [s.logits, TARGETS, dLogits]),
    attrs: lossAttrs(c, T, V),
  });
  // output: logits = hf · Wᵀ
  weightGradMatmul(c, 'output.weight', dLogits, s.hfFull, V, D);
  const ow = backwardWeight(c, 'output.weight');
  const dHfFull = emitMatmul(e, {
    name: 'output.bwd',
    a: dLogits,
    b: ow,
    M: T,
    N: D,
    K: V,
    dtype: dt,
    params: ['output.weight'],
  });
  emitReduceScatter(c, param(c, 'output.weight'));
  const dHf = emitSeqReduceScatter(c, 'output.bwd', dHfFull);
  // final norm
  const nw = backwardWeight(c, 'norm.weight');
  const dwNorm = partialGradId(c, gradId('norm.weight'));
  const dx = emitRmsNormBwd(e, {
    name: 'norm.bwd',
    dy: dHf,
    x: s.hL,
    w: nw,
    rstd: s.rstdF,
    rows: Ts,
    cols: D,
    dw: dwNorm,
    dtype: dt,
    params: ['norm.weight'],
  })[0];
  emitGradAllReduce(c, 'norm.weight', gradId('norm.weight'));
  emitReduceScatter(c, param(c, 'norm.weight'));

  return dx;
}

/** Every block's backward, last first: a recorded tape, a recompute under AC, or the saved activations. */
function emitBlocksBackward(c: ModelCtx, s: ForwardSaved, dIn: string): string {
  const { e, args } = c;
  let dx = dIn;
  for (let i = args.nLayers - 1; i >= 0; i--) {
    e.layer = i;
    const ac = c.activationCheckpointing ?? 'none';
    const tape = s.tapes[i];
    if (tape !== undefined) {
      // under AC: the block's forward again from its saved input, on a tape of its own
      dx = ac === 'none' ? tape.backward(dx) : emitTapeRecomputeBackward(c, i, tape, ac, dx);
    } else if (ac !== 'none') {
      // re-gathers first, so their waits feed the recompute and the gradient ops alike
      const weights = emitBlockRegather(c, i);
      const recomputed = emitBlockRecompute(c, i, s.layers[i], weights, ac);
      dx = emitLayerBackward(c, i, recomputed, dx, weights);
    } else {
      dx = emitLayerBackward(c, i, s.layers[i], dx);
    }
  }
  return dx;
}

/** tok_embeddings: its backward reads only the ids, so no re-gather. */
function emitEmbeddingBackward(c: ModelCtx, dIn: string): void {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const D = args.dim;
  const { V } = localDims(c);
  e.layer = undefined;
  const dx = emitSeqGather(c, 'tok_embeddings.bwd', dIn);
  const embGrad = e.tensor(gradId('tok_embeddings.weight'), [V, D], dt);
  e.node({
    name: 'tok_embeddings.bwd',
    kind: 'compute',
    op: 'embedding_bwd',
    inputs: [dx, TOKENS],
    outputs: [embGrad],
    params: ['tok_embeddings.weight'],
    flops: EW.embedding_bwd * T * D,
    bytesMoved: ioBytes(e.tensors, [dx, TOKENS, embGrad]),
    attrs: { V, D, T },
  });
  emitReduceScatter(c, param(c, 'tok_embeddings.weight'));
}

/** dW[M=out, N=in] = dYᵀ · X (its cast and reduce-scatter follow dX: torch's order). */
function weightGradMatmul(c: ModelCtx, fqn: string, dY: string, x: string, outDim: number, inDim: number): void {
  emitMatmul(c.e, {
    name: gradId(fqn),
    a: dY,
    b: x,
    M: outDim,
    N: inDim,
    K: tokensPerRank(c),
    transA: true,
    dtype: c.paramDtype,
    params: [fqn],
  });
}

/** One block's backward context: its prefix, its weights' FQNs and where each gathered weight comes from. */
interface BlockBwd {
  readonly c: ModelCtx;
  readonly p: string;
  readonly fqn: (m: string) => string;
  readonly gathered: (m: string) => string;
}

/**
 * Linear y = x·Wᵀ (W [out, in]) backward in the order torch's autograd traces it: dW = dYᵀ·X,
 * re-gather W, dX = dY·W, then dW's cast and reduce-scatter.
 */
function linearBwd(b: BlockBwd, m: string, dY: string, x: string, outDim: number, inDim: number): string {
  const { c, p, fqn } = b;
  weightGradMatmul(c, fqn(m), dY, x, outDim, inDim);
  const w = b.gathered(m);
  const dX = emitMatmul(c.e, {
    name: `${p}.${m}.bwd`,
    a: dY,
    b: w,
    M: tokensPerRank(c),
    N: inDim,
    K: outDim,
    dtype: c.paramDtype,
    params: [fqn(m)],
  });
  emitReduceScatter(c, param(c, fqn(m)));
  return dX;
}

/** RMSNorm backward: dx, and dw as a partial gradient all-reduced over tp before its reduce-scatter. */
function normBwd(b: BlockBwd, m: string, dy: string, x: string, rstd: string): string {
  const { c, p, fqn } = b;
  const w = b.gathered(m);
  const [dx] = emitRmsNormBwd(c.e, {
    name: `${p}.${m}.bwd`,
    dy,
    x,
    w,
    rstd,
    rows: seqShardRows(c),
    cols: c.args.dim,
    dw: partialGradId(c, gradId(fqn(m))),
    dtype: c.paramDtype,
    params: [fqn(m)],
  });
  emitGradAllReduce(c, fqn(m), gradId(fqn(m)));
  emitReduceScatter(c, param(c, fqn(m)));
  return dx;
}

/**
 * `weights`: the block's weights already re-gathered (activation checkpointing); else each is gathered before its use.
 */
function emitLayerBackward(
  c: ModelCtx,
  i: number,
  s: LayerSaved,
  dOut: string,
  weights?: ReadonlyMap<string, string>,
): string {
  const { e, args, paramDtype: dt } = c;
  const D = args.dim;
  const hd = headDim(args);
  const { H, KVH, F } = localDims(c);
  const p = `layers.${i}`;
  const fqn = (m: string) => `${p}.${m}.weight`;
  const b: BlockBwd = { c, p, fqn, gathered: (m) => weights?.get(fqn(m)) ?? backwardWeight(c, fqn(m)) };

  // feed-forward: out = h + w2(swiglu(w1(hn), w3(hn)))
  const dg = linearBwd(b, 'feed_forward.w2', emitSeqGather(c, `${p}.feed_forward.w2.bwd`, dOut), s.g, D, F);
  const [da, db] = emitSwigluBwd(e, { name: `${p}.feed_forward.swiglu.bwd`, dg, a: s.a, b: s.b });
  const dhn1 = linearBwd(b, 'feed_forward.w1', da, s.hnFull, F, D);
  const dhn3 = linearBwd(b, 'feed_forward.w3', db, s.hnFull, F, D);
  const dhn = emitSeqReduceScatter(
    c,
    `${p}.ffn_norm.bwd_in`,
    emitAdd(e, { name: `${p}.feed_forward.bwd_sum`, a: dhn1, b: dhn3 }),
  );
  const dhNorm = normBwd(b, 'ffn_norm', dhn, s.h, s.rstd2);
  const dh = emitAdd(e, { name: `${p}.feed_forward.residual.bwd`, a: dOut, b: dhNorm });
  // attention: h = x + wo(sdpa(wq(xn), wk(xn), wv(xn)))
  const dO = linearBwd(b, 'attention.wo', emitSeqGather(c, `${p}.attention.wo.bwd`, dh), s.o, D, H * hd);
  const [dq, dk, dv] = emitAttentionBwd(e, {
    name: `${p}.attention.sdpa.bwd`,
    dO,
    q: s.q,
    k: s.k,
    v: s.v,
    o: s.o,
    lse: s.lse,
    batch: c.batch,
    seq: c.seqLen,
    heads: H,
    kvHeads: KVH,
    headDim: hd,
    dtype: dt,
    recomputesPrologue: c.activationCheckpointing === 'selective',
  });
  const dxq = linearBwd(b, 'attention.wq', dq, s.xnFull, H * hd, D);
  const dxk = linearBwd(b, 'attention.wk', dk, s.xnFull, KVH * hd, D);
  const dxv = linearBwd(b, 'attention.wv', dv, s.xnFull, KVH * hd, D);
  const dqk = emitAdd(e, { name: `${p}.attention.bwd_sum.qk`, a: dxq, b: dxk });
  const dxn = emitSeqReduceScatter(
    c,
    `${p}.attention_norm.bwd_in`,
    emitAdd(e, { name: `${p}.attention.bwd_sum.qkv`, a: dqk, b: dxv }),
  );
  const dxNorm = normBwd(b, 'attention_norm', dxn, s.x, s.rstd1);
  return emitAdd(e, { name: `${p}.attention.residual.bwd`, a: dh, b: dxNorm });
}
