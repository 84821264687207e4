// A DeepSeek-V3 style block (torchtitan models/deepseek_v3/model.py DeepSeekV3TransformerBlock):
// attention — multi-head latent attention (MLA) when the model has `mla`, else grouped-query — then
// a dense SwiGLU in the first nDenseLayers blocks and the MoE feed-forward (moe.ts) after them.
// Built on a BlockTape (tape.ts), so its backward is the forward's ops' gradients in reverse.
// MLA: q = wq(xn) (or wq_b(q_norm(wq_a(xn)))), kv_a = wkv_a(xn) = [latent | k_pe],
// kv = wkv_b(kv_norm(latent)) = per head [k_nope | v]; attention over qk head dim nope + rope
// and v head dim v. RoPE, as for Llama (forward.ts), is not modelled.
// Tensor parallel (torchtitan/models/deepseek_v3/sharding.py, b5bcd76), with sequence parallel:
// the norms run on the block's sequence shard; attention all-gathers its normed input on tp, splits
// the heads (wq / wq_b / wkv_b colwise, wo rowwise, reduce-scattered back), and runs the low-rank
// wq_a, wkv_a and their norms replicated on every token; the dense FFN is the Llama plan's.

import { headDim, isMoeLayer, type MlaArgs } from '../model';
import type { Emitter } from './emitter';
import { emitAttention, emitAttentionBwd } from './emit_ops';
import { attentionBwdFlops, attentionFwdFlops, ioBytes } from './flops';
import { markRecompute } from './checkpoint';
import { localDims, type ModelCtx } from './forward';
import { emitMoe } from './moe';
import { BlockTape, tapeAdd, tapeFeedForward, tapeLinear, tapeRmsNorm } from './tape';
import { tapeSeqGather, tapeSeqReduceScatter } from './tp';

/** Whether the model's blocks are built on a tape (MoE or MLA) rather than by the Llama emitters. */
export const usesTapeBlocks = (c: ModelCtx): boolean => c.args.moe !== undefined || c.args.mla !== undefined;

interface MlaShape {
  readonly batch: number;
  readonly seq: number;
  readonly heads: number;
  readonly qkHeadDim: number;
  readonly vHeadDim: number;
}

/** Attention FLOPs of MLA: QKᵀ over the qk head dim, PV over the v head dim (causal halves both). */
const mlaFlops = (s: MlaShape, bwd: boolean): number =>
  (bwd ? attentionBwdFlops : attentionFwdFlops)(s.batch, s.heads, s.seq, (s.qkHeadDim + s.vHeadDim) / 2);

const mlaAttrs = (s: MlaShape) => ({
  batch: s.batch,
  seq: s.seq,
  heads: s.heads,
  kvHeads: s.heads,
  headDim: s.qkHeadDim,
  vHeadDim: s.vHeadDim,
});

/** SDPA of MLA: reads q, kv (k_nope | v per head) and kv_a (its k_pe columns) → [o, lse]. */
function mlaSdpa(t: BlockTape, base: string, q: string, kv: string, kva: string, s: MlaShape): string {
  const e: Emitter = t.e;
  const name = t.name(base);
  const T = s.batch * s.seq;
  const o = e.tensor(name, [T, s.heads * s.vHeadDim], e.tensors[q].dtype);
  const lse = e.tensor(`${name}.lse`, [s.batch * s.heads * s.seq], 'fp32');
  e.node({
    name,
    kind: 'compute',
    op: 'attention',
    inputs: [q, kv, kva],
    outputs: [o, lse],
    flops: mlaFlops(s, false),
    bytesMoved: ioBytes(e.tensors, [q, kv, kva, o, lse]),
    attrs: mlaAttrs(s),
  });
  t.record(() => {
    const grads = [q, kv, kva].map((id) => e.tensor(`${name}.bwd.d${id}`, e.tensors[id].shape, e.tensors[id].dtype));
    const inputs = [t.grad(o), q, kv, kva, o, lse];
    e.node({
      name: `${name}.bwd`,
      kind: 'compute',
      op: 'attention_bwd',
      inputs,
      outputs: grads,
      flops: mlaFlops(s, true),
      bytesMoved: ioBytes(e.tensors, [...inputs, ...grads]),
      // selective AC recomputes the eager kernels before SDPA first (estimate/compute.ts)
      attrs: { ...mlaAttrs(s), ...(t.c.activationCheckpointing === 'selective' ? { recomputesPrologue: true } : {}) },
    });
    [q, kv, kva].forEach((id, i) => t.accumulate(id, grads[i], `${name}.bwd.${i}`));
  });
  return o;
}

/** MLA on the normed input xn [T, D] (all-gathered on tp) → wo's output [T, D], a partial sum under TP. */
function emitMla(t: BlockTape, p: string, xn: string, m: MlaArgs): string {
  const { args } = t.c;
  const D = args.dim;
  const { H } = localDims(t.c);
  const qk = m.qkNopeHeadDim + m.qkRopeHeadDim;
  const w = (s: string) => `${p}.attention.${s}.weight`;
  const lin = (s: string, x: string, N: number, K: number) => tapeLinear(t, w(s), `${p}.attention.${s}`, x, N, K);
  const q =
    m.qLoraRank === 0
      ? lin('wq', xn, H * qk, D)
      : lin(
          'wq_b',
          tapeRmsNorm(t, w('q_norm'), `${p}.attention.q_norm`, lin('wq_a', xn, m.qLoraRank, D), m.qLoraRank),
          H * qk,
          m.qLoraRank,
        );
  const kva = lin('wkv_a', xn, m.kvLoraRank + m.qkRopeHeadDim, D);
  const latent = tapeRmsNorm(t, w('kv_norm'), `${p}.attention.kv_norm`, kva, m.kvLoraRank);
  const kv = lin('wkv_b', latent, H * (m.qkNopeHeadDim + m.vHeadDim), m.kvLoraRank);
  const shape = { batch: t.c.batch, seq: t.c.seqLen, heads: H, qkHeadDim: qk, vHeadDim: m.vHeadDim };
  const o = mlaSdpa(t, `${p}.attention.sdpa`, q, kv, kva, shape);
  return lin('wo', o, D, H * m.vHeadDim);
}

/** Grouped-query attention (the Llama block's, on the tape) → wo's output [T, D], a partial sum under TP. */
function emitGqa(t: BlockTape, p: string, xn: string): string {
  const { args, paramDtype: dt } = t.c;
  const D = args.dim;
  const hd = headDim(args);
  const { H, KVH } = localDims(t.c);
  const lin = (s: string, x: string, N: number, K: number) =>
    tapeLinear(t, `${p}.attention.${s}.weight`, `${p}.attention.${s}`, x, N, K);
  const q = lin('wq', xn, H * hd, D);
  const k = lin('wk', xn, KVH * hd, D);
  const v = lin('wv', xn, KVH * hd, D);
  const shape = { batch: t.c.batch, seq: t.c.seqLen, heads: H, kvHeads: KVH, headDim: hd };
  const name = t.name(`${p}.attention.sdpa`);
  const [o, lse] = emitAttention(t.e, { ...shape, name, q, k, v, dtype: dt });
  t.record(() => {
    const recomputesPrologue = t.c.activationCheckpointing === 'selective';
    const bwd = { ...shape, name: `${name}.bwd`, dO: t.grad(o), q, k, v, o, lse, dtype: dt, recomputesPrologue };
    const [dq, dk, dv] = emitAttentionBwd(t.e, bwd);
    t.accumulate(q, dq, `${name}.bwd.q`);
    t.accumulate(k, dk, `${name}.bwd.k`);
    t.accumulate(v, dv, `${name}.bwd.v`);
  });
  return lin('wo', o, D, H * hd);
}

/** The dense SwiGLU on the sequence shard hn: gathered on tp, w1/w3 colwise, w2 rowwise, reduce-scattered. */
function emitDenseFfn(t: BlockTape, p: string, hn: string): string {
  const full = tapeSeqGather(t, `${p}.ffn_norm`, hn);
  const out = tapeFeedForward(t, `${p}.feed_forward`, full, localDims(t.c).F);
  return tapeSeqReduceScatter(t, `${p}.feed_forward.w2`, out);
}

/**
 * One block on x [T, D] (its sequence shard [T/tp, D] under TP): its output and the tape its
 * backward runs from. `recompute`: the activation-checkpointing recompute in the backward (nodes
 * marked attrs.recompute).
 */
export function emitTapeBlock(c: ModelCtx, i: number, x: string, recompute = false): { out: string; tape: BlockTape } {
  const t = new BlockTape(c, recompute);
  // a recompute reads weights the backward gathers first, in module order (checkpoint.ts does the same)
  if (recompute) for (const p of c.params.values()) if (p.spec.layer === i) t.backwardWeight(p.spec.name);
  const from = c.e.nodes.length;
  const { args } = c;
  const D = args.dim;
  const p = `layers.${i}`;
  const xn = tapeRmsNorm(t, `${p}.attention_norm.weight`, `${p}.attention_norm`, x, D);
  const xnFull = tapeSeqGather(t, `${p}.attention_norm`, xn);
  const aoFull = args.mla ? emitMla(t, p, xnFull, args.mla) : emitGqa(t, p, xnFull);
  const ao = tapeSeqReduceScatter(t, `${p}.attention.wo`, aoFull);
  const h = tapeAdd(t, `${p}.attention.residual`, x, ao);
  const hn = tapeRmsNorm(t, `${p}.ffn_norm.weight`, `${p}.ffn_norm`, h, D);
  const moe = isMoeLayer(args, i);
  const f = moe ? emitMoe(t, i, hn) : emitDenseFfn(t, p, hn);
  const out = tapeAdd(t, `${p}.${moe ? 'moe' : 'feed_forward'}.residual`, h, f);
  t.bound(x, out);
  if (recompute) markRecompute(c.e, from);
  return { out, tape: t };
}
