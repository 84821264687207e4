// Forward pass of the Llama-3 decoder (torchtitan models/llama3/model/model.py) as step-graph
// nodes, each parameter gathered just before its use. RoPE is not modelled (ops.ts has no rope
// op; it is elementwise and bytes-bound, so the timeline barely changes).

import type { ModelArgs } from '../model';
import { headDim } from '../model';
import type { ActivationCheckpointing } from './config';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes } from './flops';
import { emitAdd, emitAttention, emitMatmul, emitRmsNorm, emitSwiglu } from './emit_ops';
import { emitGather, gatheredId, type FsdpCtx, type ShardedParam } from './fsdp';
import { LOSS, TARGETS, TOKENS } from './ops';
import type { SavePolicy } from './recompute_plan';
import { emitTapeBlock, usesTapeBlocks } from './moe_block';
import type { BlockTape } from './tape';
import { emitSeqGather, emitSeqReduceScatter, tpDegree } from './tp';

/** Activations one block saves for its backward. */
export interface LayerSaved {
  readonly x: string; // block input [T,D]
  readonly xn: string; // attention_norm output
  readonly rstd1: string;
  readonly q: string;
  readonly k: string;
  readonly v: string;
  readonly o: string; // attention output [T, H·hd]
  readonly ao: string; // wo's output: [T, D], or its sequence shard [T/tp, D] (reduce-scattered) under TP
  readonly lse: string;
  readonly h: string; // after the attention residual
  readonly hn: string; // ffn_norm output
  readonly rstd2: string;
  readonly a: string; // w1 output
  readonly b: string; // w3 output
  readonly g: string; // swiglu output
  /** The all-gathered (tp) norm outputs the projections read; xn / hn themselves when tp = 1. */
  readonly xnFull: string;
  readonly hnFull: string;
}

export interface ForwardSaved {
  readonly layers: readonly LayerSaved[];
  /** The MoE / MLA blocks' recorded backwards (moe_block.ts), by layer; empty for a Llama model. */
  readonly tapes: readonly BlockTape[];
  readonly hL: string; // last block output (final norm input)
  readonly hf: string; // final norm output
  readonly hfFull: string; // hf all-gathered on tp (hf when tp = 1)
  readonly rstdF: string;
  readonly logits: string;
}

export interface ModelCtx extends FsdpCtx {
  readonly args: ModelArgs;
  readonly batch: number;
  readonly seqLen: number;
  readonly params: ReadonlyMap<string, ShardedParam>;
  /** The recompute the graph has (recompute_plan.ts); absent = 'none'. */
  readonly activationCheckpointing?: ActivationCheckpointing;
  /** What a selective recompute keeps (checkpoint.ts); absent = the eager op policy. */
  readonly savePolicy?: SavePolicy;
  /** A block's / the other parameters are gathered again for the backward; absent = true (reshard). */
  readonly regatherBlocks?: boolean;
  readonly regatherOutside?: boolean;
  /** MoE routing (moe.ts): the busiest ep rank's multiple of the balanced share; absent = 1. */
  readonly moeLoadImbalance?: number;
  /** The loss is compiled (StepConfig.compileLoss); absent = eager. */
  readonly compiledLoss?: boolean;
}

/** The loss nodes' attrs: their shape, and `compiled` when inductor fuses them (sim/hidden_tensors.ts). */
export function lossAttrs(c: ModelCtx, T: number, V: number): Readonly<Record<string, number | boolean>> {
  return c.compiledLoss === true ? { T, V, compiled: true } : { T, V };
}

export const tokensPerRank = (c: ModelCtx): number => c.batch * c.seqLen;

/** Rows of a sequence-parallel activation: the rank's tokens split across tp. */
export const seqShardRows = (c: ModelCtx): number => tokensPerRank(c) / tpDegree(c);

/** The per-rank model dims under the TP plan: heads, kv heads, ffn and vocabulary split across tp. */
export function localDims(c: ModelCtx): { H: number; KVH: number; F: number; V: number } {
  const tp = tpDegree(c);
  return { H: c.args.nHeads / tp, KVH: c.args.nKvHeads / tp, F: c.args.ffnDim / tp, V: c.args.vocabSize / tp };
}

export function param(c: ModelCtx, fqn: string): ShardedParam {
  const p = c.params.get(fqn);
  if (!p) throw new Error(`internal: no parameter '${fqn}'`);
  return p;
}

/**
 * The gathered weight a backward op reads: gathered again (reshard after forward, or a memory
 * policy that recomputes the gather), or the forward's, kept live until its last backward use.
 */
export function backwardWeight(c: ModelCtx, fqn: string): string {
  const p = param(c, fqn);
  const regather = p.spec.layer === undefined ? c.regatherOutside : c.regatherBlocks;
  return regather === false ? gatheredId(fqn, '') : emitGather(c, p, 'bwd.');
}

export function emitForward(c: ModelCtx): ForwardSaved {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const Ts = seqShardRows(c);
  const D = args.dim;
  const { V } = localDims(c);
  e.phase = 'forward';
  e.layer = undefined;

  const emb = emitGather(c, param(c, 'tok_embeddings.weight'), '');
  const embOut = e.tensor('tok_embeddings', [T, D], dt);
  e.node({
    name: 'tok_embeddings',
    kind: 'compute',
    op: 'embedding',
    inputs: [emb, TOKENS],
    outputs: [embOut],
    params: ['tok_embeddings.weight'],
    bytesMoved: 2 * e.tensors[embOut].bytes + e.tensors[TOKENS].bytes, // T rows read, T rows written, the ids
    attrs: { V, D, T },
  });
  // row-wise (vocabulary-sharded) embedding: partial rows, reduce-scattered to sequence shards
  let x = emitSeqReduceScatter(c, 'tok_embeddings', embOut);

  const layers: LayerSaved[] = [];
  const tapes: BlockTape[] = [];
  for (let i = 0; i < args.nLayers; i++) {
    e.layer = i;
    if (usesTapeBlocks(c)) {
      const block = emitTapeBlock(c, i, x);
      tapes.push(block.tape);
      x = block.out;
      continue;
    }
    const s = emitLayerForward(c, i, x);
    layers.push(s);
    x = s.out!; // a full (non-partial) forward always ends with the residual add
  }
  e.layer = undefined;
  const hL = x;
  const nw = emitGather(c, param(c, 'norm.weight'), '');
  const [hf, rstdF] = emitRmsNorm(e, {
    name: 'norm',
    x: hL,
    w: nw,
    rows: Ts,
    cols: D,
    eps: args.normEps,
    dtype: dt,
    params: ['norm.weight'],
  });
  const hfFull = emitSeqGather(c, 'norm', hf);
  const ow = emitGather(c, param(c, 'output.weight'), '');
  // column-wise output: vocabulary-sharded logits (torchtitan's loss parallel; its two [T]-sized
  // all-reduces inside the cross-entropy are not modelled)
  const logits = emitMatmul(e, {
    name: 'output',
    a: hfFull,
    b: ow,
    M: T,
    N: V,
    K: D,
    transB: true,
    dtype: dt,
    params: ['output.weight'],
  });
  e.tensor(LOSS, [1], 'fp32');
  e.node({
    name: 'loss',
    kind: 'compute',
    op: 'cross_entropy',
    inputs: [logits, TARGETS],
    outputs: [LOSS],
    flops: EW.cross_entropy * T * V,
    bytesMoved: ioBytes(e.tensors, [logits, TARGETS, LOSS]),
    attrs: lossAttrs(c, T, V),
  });
  return { layers, tapes, hL, hf, hfFull, rstdF, logits };
}

/** Activations selective AC may keep from the forward instead of recomputing them. */
export type SavedActivation = 'q' | 'k' | 'v' | 'o' | 'a' | 'b' | 'ao';

/**
 * How a block's forward gets its weights and names its nodes: the forward gathers each weight
 * just before its use (suffix ''); the activation-checkpointing recompute (checkpoint.ts) reads
 * weights the backward re-gathered up front (suffix '.recompute') and stops after the last op
 * whose output the backward reads (`partial`: no w2 projection, no final residual add).
 */
export interface BlockForwardMode {
  readonly weight: (fqn: string) => string;
  readonly suffix: string;
  readonly partial: boolean;
  /** Selective AC: activations taken from the forward (saved) instead of recomputed. */
  readonly saved?: { readonly from: LayerSaved; readonly keep: ReadonlySet<SavedActivation> };
}

export function emitLayerForward(
  c: ModelCtx,
  i: number,
  x: string,
  mode?: BlockForwardMode,
): LayerSaved & { out?: string } {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const Ts = seqShardRows(c);
  const D = args.dim;
  const hd = headDim(args);
  const p = `layers.${i}`;
  const { H, KVH, F } = localDims(c);
  const fqn = (s: string) => `${p}.${s}.weight`;
  const sfx = mode?.suffix ?? '';
  const gather = (s: string) => (mode ? mode.weight(fqn(s)) : emitGather(c, param(c, fqn(s)), ''));
  const linear = (s: string, inp: string, N: number, K: number) =>
    emitMatmul(e, {
      name: `${p}.${s}${sfx}`,
      a: inp,
      b: gather(s),
      M: T,
      N,
      K,
      transB: true,
      dtype: dt,
      params: [fqn(s)],
    });

  const w1n = gather('attention_norm');
  const [xn, rstd1] = emitRmsNorm(e, {
    name: `${p}.attention_norm${sfx}`,
    x,
    w: w1n,
    rows: Ts,
    cols: D,
    eps: args.normEps,
    dtype: dt,
    params: [fqn('attention_norm')],
  });
  const sv = mode?.saved;
  const kept = (key: SavedActivation): string | undefined => (sv?.keep.has(key) ? sv.from[key] : undefined);
  // selective AC saves q and v but recomputes k, so the gather is always re-run
  const xnFull = emitSeqGather(c, `${p}.attention_norm${sfx}`, xn);
  const q = kept('q') ?? linear('attention.wq', xnFull, H * hd, D);
  const k = kept('k') ?? linear('attention.wk', xnFull, KVH * hd, D);
  const v = kept('v') ?? linear('attention.wv', xnFull, KVH * hd, D);
  const [o, lse] = sv?.keep.has('o')
    ? [sv.from.o, sv.from.lse]
    : emitAttention(e, {
        name: `${p}.attention.sdpa${sfx}`,
        q,
        k,
        v,
        batch: c.batch,
        seq: c.seqLen,
        heads: H,
        kvHeads: KVH,
        headDim: hd,
        dtype: dt,
      });
  const ao = kept('ao') ?? emitSeqReduceScatter(c, `${p}.attention.wo${sfx}`, linear('attention.wo', o, D, H * hd));
  const h = emitAdd(e, { name: `${p}.attention.residual${sfx}`, a: x, b: ao });
  const w2n = gather('ffn_norm');
  const [hn, rstd2] = emitRmsNorm(e, {
    name: `${p}.ffn_norm${sfx}`,
    x: h,
    w: w2n,
    rows: Ts,
    cols: D,
    eps: args.normEps,
    dtype: dt,
    params: [fqn('ffn_norm')],
  });
  const hnFull = emitSeqGather(c, `${p}.ffn_norm${sfx}`, hn);
  const a = kept('a') ?? linear('feed_forward.w1', hnFull, F, D);
  const b = kept('b') ?? linear('feed_forward.w3', hnFull, F, D);
  const g = emitSwiglu(e, { name: `${p}.feed_forward.swiglu${sfx}`, a, b });
  const saved = { x, xn, rstd1, q, k, v, o, lse, ao, h, hn, rstd2, a, b, g, xnFull, hnFull };
  if (mode?.partial) return saved;
  const fo = emitSeqReduceScatter(c, `${p}.feed_forward.w2${sfx}`, linear('feed_forward.w2', g, D, F));
  const out = emitAdd(e, { name: `${p}.feed_forward.residual${sfx}`, a: h, b: fo });
  return { ...saved, out };
}
