// graph_trainer's schedule_fsdp_comms_to_dense_regions_pass (`--compile.enable_fsdp_dense_region_overlap`,
// aot_fx_trace after joint_transformer_block_bucketing_reordering_pass; torchtitan
// experiments/graph_trainer/fsdp_passes.py), on a transformer_block schedule. In a model without MoE
// every block is one dense region, so the launch points the pass picks (AG(i) at the start of block
// i−1's forward and of block i+1's backward, RS(i) in block i−1's backward once its gradient is
// ready) are the one-block-ahead points transformer_block already uses; what changes is that the
// FSDP reduce-scatters' waits "and pure output-unpack users are sunk to the graph tail". Here the
// tail is the first node that reads the wait's outputs outside those views (the optimizer, or
// HSDP's all-reduce): compute no longer stops for a reduce-scatter mid-backward, and its buffers
// stay live until then (docs/ARCHITECTURE.md §5).

import type { GraphNode } from '../graph';
import { fsdpGroupOf } from './collective_pgs';
import type { Schedule } from './schedule_types';

/** The schedule with each FSDP reduce-scatter wait (and its views) moved to just before its first other reader. */
export function sinkReduceScatterWaits(schedule: Schedule): Schedule {
  const nodes = schedule.graph.nodes;
  const fsdp = fsdpGroupOf(schedule.graph);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const isFsdpRsWait = (n: GraphNode) => {
    const c = n.waitOf === undefined ? undefined : byName.get(n.waitOf)?.collective;
    return n.kind === 'wait' && c?.kind === 'reduce_scatter' && c.group === fsdp;
  };
  const moveTo = new Map<number, number[]>(); // destination position → positions moved before it
  const moved = new Set<number>();
  for (let i = 0; i < nodes.length; i++) {
    if (!isFsdpRsWait(nodes[i])) continue;
    const { closure, firstReader } = waitClosure(nodes, i);
    if (firstReader === closure[closure.length - 1] + 1 && closure.every((p, k) => p === i + k)) continue;
    for (const p of closure) moved.add(p);
    moveTo.set(firstReader, [...(moveTo.get(firstReader) ?? []), ...closure]);
  }
  if (moved.size === 0) return schedule;
  const order: GraphNode[] = [];
  for (let i = 0; i <= nodes.length; i++) {
    for (const p of moveTo.get(i) ?? []) order.push(nodes[p]);
    if (i < nodes.length && !moved.has(i)) order.push(nodes[i]);
  }
  const renumbered = order.map((n, id) => (n.id === id ? n : { ...n, id }));
  return { ...schedule, graph: { ...schedule.graph, nodes: renumbered } };
}

/**
 * The wait at `at` with the views after it that read only its outputs (positions, in order), and
 * the position of the first other node reading any of their outputs (nodes.length: none).
 */
function waitClosure(nodes: readonly GraphNode[], at: number): { closure: number[]; firstReader: number } {
  const closure = [at];
  const outputs = new Set(nodes[at].outputs);
  for (let i = at + 1; i < nodes.length; i++) {
    const n = nodes[i];
    if (!n.inputs.some((t) => outputs.has(t))) continue;
    if (n.kind !== 'view' || !n.inputs.every((t) => outputs.has(t))) return { closure, firstReader: i };
    closure.push(i);
    for (const t of n.outputs) outputs.add(t);
  }
  return { closure, firstReader: nodes.length };
}
