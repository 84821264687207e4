// Forward pass of the Llama-3 decoder (torchtitan models/llama3/model/model.py) as step-graph
// nodes, each parameter gathered just before its use. RoPE is not modelled (ops.ts has no rope
// op; it is elementwise and bytes-bound, so the timeline barely changes).

import type { ModelArgs } from '../model/args';
import { headDim } from '../model/args';
import type { ActivationCheckpointing } from './config';
import { ELEMENTWISE_FLOPS_PER_ELEM as EW, ioBytes } from './flops';
import { emitAdd, emitAttention, emitMatmul, emitRmsNorm, emitSwiglu } from './emit_ops';
import { emitGather, type FsdpCtx, type ShardedParam } from './fsdp';
import { LOSS, TARGETS, TOKENS } from './ops';

/** Activations one block saves for its backward. */
export interface LayerSaved {
  readonly x: string; // block input [T,D]
  readonly xn: string; // attention_norm output
  readonly rstd1: string;
  readonly q: string;
  readonly k: string;
  readonly v: string;
  readonly o: string; // attention output [T, H·hd]
  readonly lse: string;
  readonly h: string; // after the attention residual
  readonly hn: string; // ffn_norm output
  readonly rstd2: string;
  readonly a: string; // w1 output
  readonly b: string; // w3 output
  readonly g: string; // swiglu output
}

export interface ForwardSaved {
  readonly layers: readonly LayerSaved[];
  readonly hL: string; // last block output (final norm input)
  readonly hf: string; // final norm output
  readonly rstdF: string;
  readonly logits: string;
}

export interface ModelCtx extends FsdpCtx {
  readonly args: ModelArgs;
  readonly batch: number;
  readonly seqLen: number;
  readonly params: ReadonlyMap<string, ShardedParam>;
  /** torchtitan activation_checkpoint.mode; absent = 'none'. */
  readonly activationCheckpointing?: ActivationCheckpointing;
}

export const tokensPerRank = (c: ModelCtx): number => c.batch * c.seqLen;

export function param(c: ModelCtx, fqn: string): ShardedParam {
  const p = c.params.get(fqn);
  if (!p) throw new Error(`internal: no parameter '${fqn}'`);
  return p;
}

export function emitForward(c: ModelCtx): ForwardSaved {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const D = args.dim;
  const V = args.vocabSize;
  e.phase = 'forward';
  e.layer = undefined;

  const emb = emitGather(c, param(c, 'tok_embeddings.weight'), '');
  let x = e.tensor('tok_embeddings', [T, D], dt);
  e.node({
    name: 'tok_embeddings', kind: 'compute', op: 'embedding', inputs: [emb, TOKENS], outputs: [x], params: ['tok_embeddings.weight'],
    bytesMoved: 2 * e.tensors[x].bytes + e.tensors[TOKENS].bytes, // T rows read, T rows written, the ids
    attrs: { V, D, T },
  });

  const layers: LayerSaved[] = [];
  for (let i = 0; i < args.nLayers; i++) {
    e.layer = i;
    const s = emitLayerForward(c, i, x);
    layers.push(s);
    x = s.out!; // a full (non-partial) forward always ends with the residual add
  }
  e.layer = undefined;
  const hL = x;
  const nw = emitGather(c, param(c, 'norm.weight'), '');
  const [hf, rstdF] = emitRmsNorm(e, { name: 'norm', x: hL, w: nw, rows: T, cols: D, eps: args.normEps, dtype: dt, params: ['norm.weight'] });
  const ow = emitGather(c, param(c, 'output.weight'), '');
  const logits = emitMatmul(e, { name: 'output', a: hf, b: ow, M: T, N: V, K: D, transB: true, dtype: dt, params: ['output.weight'] });
  e.tensor(LOSS, [1], 'fp32');
  e.node({
    name: 'loss', kind: 'compute', op: 'cross_entropy', inputs: [logits, TARGETS], outputs: [LOSS],
    flops: EW.cross_entropy * T * V, bytesMoved: ioBytes(e.tensors, [logits, TARGETS, LOSS]), attrs: { T, V },
  });
  return { layers, hL, hf, rstdF, logits };
}

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
  readonly saved?: { readonly from: LayerSaved; readonly keep: ReadonlySet<'q' | 'k' | 'v' | 'o' | 'a' | 'b'> };
}

export function emitLayerForward(c: ModelCtx, i: number, x: string, mode?: BlockForwardMode): LayerSaved & { out?: string } {
  const { e, args, paramDtype: dt } = c;
  const T = tokensPerRank(c);
  const D = args.dim;
  const hd = headDim(args);
  const p = `layers.${i}`;
  const H = args.nHeads;
  const KVH = args.nKvHeads;
  const F = args.ffnDim;
  const fqn = (s: string) => `${p}.${s}.weight`;
  const sfx = mode?.suffix ?? '';
  const gather = (s: string) => (mode ? mode.weight(fqn(s)) : emitGather(c, param(c, fqn(s)), ''));
  const linear = (s: string, inp: string, N: number, K: number) =>
    emitMatmul(e, { name: `${p}.${s}${sfx}`, a: inp, b: gather(s), M: T, N, K, transB: true, dtype: dt, params: [fqn(s)] });

  const w1n = gather('attention_norm');
  const [xn, rstd1] = emitRmsNorm(e, { name: `${p}.attention_norm${sfx}`, x, w: w1n, rows: T, cols: D, eps: args.normEps, dtype: dt, params: [fqn('attention_norm')] });
  const sv = mode?.saved;
  const kept = (key: 'q' | 'k' | 'v' | 'o' | 'a' | 'b'): string | undefined => (sv?.keep.has(key) ? sv.from[key] : undefined);
  const q = kept('q') ?? linear('attention.wq', xn, H * hd, D);
  const k = kept('k') ?? linear('attention.wk', xn, KVH * hd, D);
  const v = kept('v') ?? linear('attention.wv', xn, KVH * hd, D);
  const [o, lse] = sv?.keep.has('o')
    ? [sv.from.o, sv.from.lse]
    : emitAttention(e, { name: `${p}.attention.sdpa${sfx}`, q, k, v, batch: c.batch, seq: c.seqLen, heads: H, kvHeads: KVH, headDim: hd, dtype: dt });
  const ao = linear('attention.wo', o, D, H * hd);
  const h = emitAdd(e, { name: `${p}.attention.residual${sfx}`, a: x, b: ao });
  const w2n = gather('ffn_norm');
  const [hn, rstd2] = emitRmsNorm(e, { name: `${p}.ffn_norm${sfx}`, x: h, w: w2n, rows: T, cols: D, eps: args.normEps, dtype: dt, params: [fqn('ffn_norm')] });
  const a = kept('a') ?? linear('feed_forward.w1', hn, F, D);
  const b = kept('b') ?? linear('feed_forward.w3', hn, F, D);
  const g = emitSwiglu(e, { name: `${p}.feed_forward.swiglu${sfx}`, a, b });
  const saved = { x, xn, rstd1, q, k, v, o, lse, h, hn, rstd2, a, b, g };
  if (mode?.partial) return saved;
  const fo = linear('feed_forward.w2', g, D, F);
  const out = emitAdd(e, { name: `${p}.feed_forward.residual${sfx}`, a: h, b: fo });
  return { ...saved, out };
}
