// Compute-op vocabulary of the step graph: the contract between the graph builder (which emits
// these ops with their attrs) and the runtime (which executes them, CPU or WGSL, op by op).
// All tensors are row-major fp32 in live mode; token ids are int32. T = batch · seqLen tokens.

export type ComputeOp =
  // embeddings
  | 'embedding' // in [weight [V,D], tokens i32 [T]] → out [T,D]; attrs {V, D, T}
  | 'embedding_bwd' // in [dOut [T,D], tokens] → dWeight [V,D] (zeroed, then scatter-add); attrs {V, D, T}
  // matmul: C[M,N] = op(A)[M,K] · op(B)[K,N]; op(X) = Xᵀ when trans*. A stored [K,M] when transA,
  // B stored [N,K] when transB. Linear y = x·Wᵀ is {transB}; dX = dY·W is plain; dW = dYᵀ·X is {transA}.
  | 'matmul' // in [A, B] → [C]; attrs {M, N, K, transA, transB}
  // RMSNorm over the last dim: y = x · rstd · w, rstd = 1/sqrt(mean(x²) + eps)
  | 'rms_norm' // in [x [R,C], w [C]] → [y [R,C], rstd [R]]; attrs {rows, cols, eps}
  | 'rms_norm_bwd' // in [dy, x, w, rstd] → [dx [R,C], dw [C]]; attrs {rows, cols}
  // SwiGLU gate: g = silu(a) · b, a = x·w1ᵀ, b = x·w3ᵀ
  | 'swiglu' // in [a, b] → [g]; attrs {n}
  | 'swiglu_bwd' // in [dg, a, b] → [da, db]; attrs {n}
  // causal self-attention per batch element, scale 1/sqrt(headDim); q [T, H·hd], k/v [T, KVH·hd]
  // (GQA: head h reads kv head floor(h·KVH/H)); lse [batch·H·seq] is saved for the backward
  | 'attention' // in [q, k, v] → [o [T, H·hd], lse]; attrs {batch, seq, heads, kvHeads, headDim}
  | 'attention_bwd' // in [dO, q, k, v, o, lse] → [dq, dk, dv]; attrs as attention
  // elementwise
  | 'add' // in [a, b] → [c]; attrs {n}
  // a layout copy (torch's cat of chunks around a sequence-parallel collective): same values
  | 'copy' // in [x] → [y]; attrs {n}
  // loss: mean over the T local tokens of −log softmax(logits)[target]
  | 'cross_entropy' // in [logits [T,V], targets i32 [T]] → [loss [1]]; attrs {T, V, compiled?}
  | 'cross_entropy_bwd' // in [logits, targets] → [dLogits [T,V]] = (softmax − onehot)/T; attrs {T, V, compiled?}
  // optimizer on the local shard (decoupled weight decay); the step number t comes from the runtime
  | 'adamw' // in [p, g, m, v] → [p', m', v']; attrs {n, lr, beta1, beta2, eps, weightDecay}
  // mixture of experts (moe.ts; torchtitan models/common/moe.py): E experts, top k per token, R routed rows
  // softmax, top k, and the tokens each expert got (counts, the dispatch's split sizes)
  | 'router_topk' // in [logits [T,E]] → [scores fp32 [T,k], ids i32 [T,k], counts i32 [E]]; attrs {T, E, k}
  | 'router_topk_bwd' // in [dScores, logits, ids] → [dLogits [T,E]]; attrs {T, E, k}
  // rows gathered in routing order
  | 'moe_permute' // in [x [rowsIn,D], ids] → [y [rowsOut,D]]; attrs {rowsIn, rowsOut, D}
  // rows summed back in token order, weighted by the scores when given (combine; a permute's backward)
  | 'moe_scatter_add' // in [y [rowsIn,D], ids, scores?] → [x [rowsOut,D]]; attrs {rowsIn, rowsOut, D, k}
  | 'moe_combine_bwd' // in [dOut [T,D], y [T·k,D], scores, ids] → [dY [T·k,D], dScores [T,k]]; attrs {T, D, k}
  // per-expert matmul over contiguous row groups (torch._grouped_mm): C[R,N] = A[R,K]·B_eᵀ (B [E,N,K],
  // transB); the weight gradient dB_e = dC_eᵀ·A_e is {transA} with output [E,N,K]
  | 'grouped_mm'; // in [A, B] → [C]; attrs {M: R, N, K, groups: E, transA, transB}

/** The MoE ops: live training plans them from the routing, then runs their kernels (runtime/exec/moe_exec.ts). */
export const MOE_OPS = [
  'router_topk',
  'router_topk_bwd',
  'moe_permute',
  'moe_scatter_add',
  'moe_combine_bwd',
  'grouped_mm',
] as const satisfies readonly ComputeOp[];
export type MoeOp = (typeof MOE_OPS)[number];

/** Every compute op, the MoE ones last. */
export const COMPUTE_OPS: readonly ComputeOp[] = [
  'embedding',
  'embedding_bwd',
  'matmul',
  'rms_norm',
  'rms_norm_bwd',
  'swiglu',
  'swiglu_bwd',
  'attention',
  'attention_bwd',
  'add',
  'copy',
  'cross_entropy',
  'cross_entropy_bwd',
  'adamw',
  ...MOE_OPS,
];

const MOE_OP_SET: ReadonlySet<string> = new Set(MOE_OPS);

/** Whether `op` is a MoE op: not a fixed-size kernel, live training plans it from the routing. */
export const isMoeOp = (op: string | undefined): op is MoeOp => MOE_OP_SET.has(op ?? '');

/**
 * Ops the overlap scheduler treats as compute nodes (torch: mm, bmm, attention fwd/bwd, and
 * _grouped_mm, which torch's flop counter counts).
 */
export const MATMUL_LIKE_OPS: ReadonlySet<string> = new Set(['matmul', 'attention', 'attention_bwd', 'grouped_mm']);

/** Step inputs every rank feeds: its own micro-batch. */
export const TOKENS = 'tokens'; // i32 [T]
export const TARGETS = 'targets'; // i32 [T]
export const LOSS = 'loss'; // fp32 [1]

/**
 * Tensor ids of one parameter's persistent state and its per-step values. The runtime owns the
 * persistent ones (shard, m, v) and, after the optimizer, copies the `*Next` values back.
 */
export function paramTensorIds(param: string) {
  return {
    shard: `${param}.shard`, // [shardRows, ...rest] in param dtype, persistent
    m: `${param}.exp_avg`, // fp32 shard, persistent
    v: `${param}.exp_avg_sq`, // fp32 shard, persistent
    shardNext: `${param}.shard.next`,
    mNext: `${param}.exp_avg.next`,
    vNext: `${param}.exp_avg_sq.next`,
    gradShard: `${param}.grad.shard`, // the reduce-scattered gradient (after its wait)
  } as const;
}
