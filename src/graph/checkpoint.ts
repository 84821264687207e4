// Activation checkpointing of transformer blocks (torchtitan `activation_checkpoint.mode`): "full"
// wraps every block in torch.utils.checkpoint via `ptd_checkpoint_wrapper`; "selective" (op) keeps
// some op outputs (SELECTIVE_OP_SAVED) and recomputes the rest of the block the same way.
//
// Forward keeps only each block's input (and what the final norm / output / loss need); nothing
// in the graph reads a block's internal activations after their forward use, so their liveness
// ends there. At the start of a block's backward:
//   1. every weight of the block is re-gathered (cast → all_gather → wait), in forward order —
//      the gathers come first so their waits feed the recompute and the gradient ops alike —
//      unless the block keeps its gathered parameters (reshard_after_forward never);
//   2. the block's forward is recomputed from the saved input: the same ops with new tensor ids
//      (node and tensor names end in '.recompute', attrs.recompute = true, phase 'backward');
//   3. the gradient ops read the recomputed activations and the re-gathered weights.
// SimpleFSDP runs under torch.compile, where AC is a region the min-cut partitioner recomputes:
// only what the backward reads is recomputed, so the w2 projection and the final residual add
// (outputs no gradient op reads) are dead code and are not emitted. FLOPs grow by ≈ one forward
// of the blocks (minus w2). Upstream: torchtitan distributed/activation_checkpoint.py,
// torch/_functorch/partitioners.py (`must_recompute`).

import type { Emitter } from './emitter';
import { backwardWeight, emitLayerForward, type LayerSaved, type ModelCtx, type SavedActivation } from './forward';
import { tpDegree } from './tp';
import type { GraphNode } from './types';

/** Suffix of recomputed nodes' and tensors' names. */
export const RECOMPUTE_SUFFIX = '.recompute';

/** Weights of block i in forward order (the order the recompute reads them). */
export function blockWeights(i: number): string[] {
  return [
    'attention_norm',
    'attention.wq',
    'attention.wk',
    'attention.wv',
    'attention.wo',
    'ffn_norm',
    'feed_forward.w1',
    'feed_forward.w3',
    'feed_forward.w2',
  ].map((m) => `layers.${i}.${m}.weight`);
}

/**
 * The weights of block i for its recompute and gradient ops: each re-gathered (backward tag
 * 'bwd.') or, when the block keeps its gathered parameters, the forward's; FQN → full tensor id.
 */
export function emitBlockRegather(c: ModelCtx, i: number): Map<string, string> {
  const full = new Map<string, string>();
  for (const fqn of blockWeights(i)) full.set(fqn, backwardWeight(c, fqn));
  return full;
}

/**
 * torchtitan's op-level selective AC (`_custom_policy`, selective_ac_option "op"): the outputs of
 * the ops in its save list (mm, flash/efficient sdpa) are saved, except every second mm of a block,
 * counted in forward order: wq (1, saved), wk (2), wv (3, saved), wo (4), w1 (5, saved), w3 (6),
 * w2 (7, saved but read by no gradient op). Everything else — norms, adds, SwiGLU — is recomputed.
 */
const SELECTIVE_OP_SAVED: ReadonlySet<SavedActivation> = new Set(['q', 'v', 'o', 'a'] as const);

/**
 * Under TP the save list's reduce_scatter_tensor also keeps wo's sequence-parallel reduce-scatter
 * output, so neither it nor the wo matmul that only feeds it is recomputed (w2's is past the
 * partial recompute anyway).
 */
const SELECTIVE_OP_SAVED_TP: ReadonlySet<SavedActivation> = new Set([...SELECTIVE_OP_SAVED, 'ao'] as const);

/**
 * graph_trainer's default memory policy (aot_fx_trace): every op of the save list is kept — all
 * seven mm outputs, SDPA's and the tp reduce-scatter's (wo's output either way) — and the norms,
 * adds, SwiGLU and the tp all-gathers of the norm outputs are recomputed.
 */
const GRAPH_DEFAULT_SAVED: ReadonlySet<SavedActivation> = new Set(['q', 'k', 'v', 'o', 'a', 'b', 'ao'] as const);

function selectiveKeep(c: ModelCtx): ReadonlySet<SavedActivation> {
  if (c.savePolicy === 'graph_default') return GRAPH_DEFAULT_SAVED;
  return tpDegree(c) > 1 ? SELECTIVE_OP_SAVED_TP : SELECTIVE_OP_SAVED;
}

/**
 * Recomputes block i's forward from its saved input (`fwd.x`) with the re-gathered weights —
 * all of it ('full') or what the selective policy did not save — and returns the activations the
 * backward reads (recomputed, or saved ones for 'selective'). Marks the emitted nodes attrs.recompute.
 */
export function emitBlockRecompute(
  c: ModelCtx,
  i: number,
  fwd: LayerSaved,
  weights: ReadonlyMap<string, string>,
  mode: 'full' | 'selective' = 'full',
): LayerSaved {
  const from = c.e.nodes.length;
  const weight = (fqn: string): string => {
    const w = weights.get(fqn);
    if (w === undefined) throw new Error(`internal: block ${i} recompute needs '${fqn}', which was not re-gathered`);
    return w;
  };
  const saved = emitLayerForward(c, i, fwd.x, {
    weight,
    suffix: RECOMPUTE_SUFFIX,
    partial: true,
    ...(mode === 'selective' ? { saved: { from: fwd, keep: selectiveKeep(c) } } : {}),
  });
  markRecompute(c.e, from);
  return saved;
}

/** Sets attrs.recompute on the nodes emitted since `from` (the Emitter has no attrs hook). */
export function markRecompute(e: Emitter, from: number): void {
  for (let k = from; k < e.nodes.length; k++) {
    const n = e.nodes[k];
    e.nodes[k] = { ...n, attrs: { ...n.attrs, recompute: true } };
  }
}

/** Whether a node is an activation-checkpointing recompute (for the UI and explain panel). */
export function isRecomputeNode(n: GraphNode): boolean {
  return n.attrs?.recompute === true;
}
