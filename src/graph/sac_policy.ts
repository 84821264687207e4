// Which forward ops of a tape block (moe_block.ts) selective activation checkpointing saves: the
// per-op decision of torchtitan's policies, read off the block's forward nodes in order.
//
// Eager op SAC (torchtitan distributed/activation_checkpoint.py at b5bcd76, `_get_default_save_ops`
// and SelectiveAC's `_get_custom_policy`): saved are torch's compute-intensive ops
// (partitioners.py `get_default_op_list`: aten.mm, bmm, flash / efficient SDPA, ...), aten.linear,
// flex_attention, aten.topk, reduce_scatter_tensor and all_to_all_single outputs, and CUDA→CPU
// copies; every second mm / linear of a block is recomputed instead (a counter per checkpointed
// block, in forward order), and an mm whose weight shape is a `force_recompute_mm_shapes_by_fqns`
// Linear's (default ["moe.router.gate"]) is recomputed and not counted. aten._grouped_mm is in
// neither list, so the routed experts' GEMMs are recomputed; so are norms, softmax, permutes, the
// SwiGLU and the combine's scatter_add. On a DSV3-16B MoE block the counter walks wq 1 (saved),
// wkv_a 2, wkv_b 3 (saved), wo 4, the router gate (forced, uncounted), shared experts' w1 5 (saved),
// w3 6, w2 7 (saved).
// The Dec 2025 file (575674a4e, the SimpleFSDP PR #2080 era) took the save list from the model:
// deepseek_v3's had mm, SDPA, flex_attention, reduce_scatter and all_to_all_single but no topk (the
// router's topk was recomputed), and simple_fsdp's deepseek_v3 passed none, so its op SAC saved
// nothing but the CUDA→CPU copy. The MoE-relevant difference from b5bcd76 is topk; fsdp-sim models b5bcd76's.
//
// graph_trainer (experiments/graph_trainer/memory_policy.py): 'default' saves every op of the same
// list, every mm included (the router gate too), and no mm is skipped; 'eager' alternates mm / linear
// per layer like the eager policy but has no force-recompute shapes. Both leave grouped_mm recomputed.
// A collective's wait inherits its decision (tag_sac_policy: "wait_tensor ... share the parent's").
// The CUDA→CPU copy of the split sizes is not a node of the step graph.

import type { ModelCtx } from './forward';
import type { GraphNode } from './types';

/** torchtitan's SelectiveAC.Config `force_recompute_mm_shapes_by_fqns` default. */
const FORCE_RECOMPUTE_FQNS: readonly string[] = ['moe.router.gate'];

/** The torch op a node stands for, as far as the save lists tell ops apart. */
type SacOp = 'mm' | 'saved_always' | 'other';

function sacOp(n: GraphNode): SacOp {
  if (n.kind === 'all_to_all' || n.kind === 'reduce_scatter') return 'saved_always';
  if (n.kind !== 'compute') return 'other';
  if (n.op === 'matmul') return 'mm';
  // attention: SDPA / flex_attention; router_topk: softmax → aten.topk (saved for its outputs)
  return n.op === 'attention' || n.op === 'router_topk' ? 'saved_always' : 'other';
}

/** An mm's right-hand side shape (in, out) as torch's policy compares it: [K, N] of y = x·Wᵀ. */
const mmShape = (n: GraphNode): string => `${n.attrs?.K}x${n.attrs?.N}`;

/** The (in, out) shapes of the block's Linears named by FORCE_RECOMPUTE_FQNS. */
function forcedRecomputeShapes(block: readonly GraphNode[]): Set<string> {
  const named = (n: GraphNode) => (n.params ?? []).some((p) => FORCE_RECOMPUTE_FQNS.some((f) => p.includes(f)));
  return new Set(block.filter((n) => sacOp(n) === 'mm' && named(n)).map(mmShape));
}

/**
 * The names of the block's forward nodes whose outputs selective AC saves for the backward, under
 * the context's save policy (absent: torchtitan's eager op SAC).
 */
export function savedForwardNodes(c: ModelCtx, block: readonly GraphNode[]): Set<string> {
  const policy = c.savePolicy ?? 'eager';
  const forced = policy === 'eager' ? forcedRecomputeShapes(block) : new Set<string>();
  const saved = new Set<string>();
  let mmCount = 0;
  for (const n of block) {
    if (n.kind === 'wait') {
      if (n.waitOf !== undefined && saved.has(n.waitOf)) saved.add(n.name);
      continue;
    }
    const op = sacOp(n);
    if (op === 'other') continue;
    if (op === 'mm' && policy !== 'graph_default') {
      if (forced.has(mmShape(n))) continue;
      mmCount += 1;
      if (mmCount % 2 === 0) continue;
    }
    saved.add(n.name);
  }
  return saved;
}
