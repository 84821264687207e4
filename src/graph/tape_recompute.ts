// The backward of a tape block (moe_block.ts) under activation checkpointing. Both modes emit the
// block's forward again from its saved input on a tape of its own (nodes marked `recompute`) and
// run that tape's backward. Full AC keeps it all. Selective AC then applies the save policy
// (sac_policy.ts): a recomputed op whose forward op was saved is dropped and its readers read the
// forward's output instead (kept live from the forward: memory), and a recomputed op no gradient
// needs any more is dropped too. That is what torch.compile's partitioner and graph_trainer's remat
// pass (selective_activation_remat.py: duplicates only what a backward node consumes) recompute;
// eager checkpointing with early_stop=False would replay the block's other ops as well.
// The recompute stays at the start of the block's backward, as for the Llama block (checkpoint.ts).

import type { ActivationCheckpointing } from './config';
import { isRecomputeNode, RECOMPUTE_SUFFIX } from './checkpoint';
import type { Emitter } from './emitter';
import type { ModelCtx } from './forward';
import { emitTapeBlock } from './moe_block';
import { savedForwardNodes } from './sac_policy';
import type { BlockTape } from './tape';
import type { GraphNode } from './types';

/** The forward node a recompute node copies: its name without the recompute suffix. */
const forwardName = (n: GraphNode): string => n.name.replace(RECOMPUTE_SUFFIX, '');

/**
 * Block i's backward from dOut under AC ('full' or 'selective') from its forward tape; returns the
 * gradient of the block's input.
 */
export function emitTapeRecomputeBackward(
  c: ModelCtx,
  i: number,
  forward: BlockTape,
  ac: Exclude<ActivationCheckpointing, 'none'>,
  dOut: string,
): string {
  const from = c.e.nodes.length;
  const dx = emitTapeBlock(c, i, forward.input, true).tape.backward(dOut);
  if (ac === 'selective') {
    const block = forward.forwardNodes();
    reuseSavedOutputs(c.e, from, block, savedForwardNodes(c, block));
  }
  return dx;
}

/**
 * Drops the recompute nodes from `from` on whose forward node is saved (their outputs become the
 * forward's) and then those no kept node reads, last first.
 */
function reuseSavedOutputs(e: Emitter, from: number, block: readonly GraphNode[], saved: ReadonlySet<string>): void {
  const forward = new Map(block.map((n) => [n.name, n]));
  const drop = new Set<number>();
  const alias = new Map<string, string>(); // recomputed tensor → the forward's saved one
  for (let k = from; k < e.nodes.length; k++) {
    const n = e.nodes[k];
    if (!isRecomputeNode(n) || !saved.has(forwardName(n))) continue;
    const f = forward.get(forwardName(n));
    if (f === undefined) throw new Error(`internal: recompute node '${n.name}' has no forward node`);
    drop.add(k);
    n.outputs.forEach((t, j) => alias.set(t, f.outputs[j]));
  }
  const read = new Set<string>();
  for (let k = e.nodes.length - 1; k >= from; k--) {
    const n = e.nodes[k];
    if (drop.has(k)) continue;
    if (isRecomputeNode(n) && !n.outputs.some((t) => read.has(t))) {
      drop.add(k);
      continue;
    }
    for (const t of n.inputs) read.add(alias.get(t) ?? t);
  }
  e.rewriteFrom(from, (n) => (drop.has(n.id) ? undefined : { ...n, inputs: n.inputs.map((t) => alias.get(t) ?? t) }));
}
