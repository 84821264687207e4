// Builds a backend's output graph: the nodes in execution order (node.id === position) with
// buckets rewired by the FIXED convention the live runtime executes:
//  - merged collective: inputs = members' inputs concatenated in member order, outputs = members'
//    collective outputs in member order, collective.members = member names (same order),
//    inputBytes / outputBytes summed;
//  - merged wait: inputs = the merged collective's outputs, outputs = the members' original wait
//    outputs (each still aliasOf its member's collective output), in member order,
// so every original consumer reads exactly the tensor it read before. Tensors are unchanged.

import { collectiveCostBytes, type GraphNode, type StepGraph } from '../graph';
import type { Bucket } from './schedule_types';
import type { GraphIndex } from './graph_index';

/** A bucket to materialise: member collectives (graph-index numbers) in issue order. */
export interface BucketPlan {
  readonly id: number;
  readonly members: readonly number[];
}

/** One slot of the output order: an original node, or a bucket's merged start / wait. */
export type OrderItem =
  | { readonly type: 'node'; readonly index: number }
  | { readonly type: 'bucket_start'; readonly bucket: number }
  | { readonly type: 'bucket_wait'; readonly bucket: number };

/** torch's _ag_group_key / _rs_group_key / _ar_group_key: (group, dtype) or (group, reduce op, dtype). */
export function bucketKey(node: GraphNode): string {
  const c = node.collective!;
  return c.kind === 'all_gather' ? `${c.group}|${c.dtype}` : `${c.group}|${c.reduceOp ?? 'sum'}|${c.dtype}`;
}

/** The bytes a bucket reports: gathered output (AG) or full input (RS), per rank. */
const collectiveBytes = (node: GraphNode): number => collectiveCostBytes(node.collective!);

function commonLayer(nodes: readonly GraphNode[]): number | undefined {
  const l = nodes[0].layer;
  return nodes.every((n) => n.layer === l) ? l : undefined;
}

/** Materialises buckets and the order into a new StepGraph plus the Bucket records. */
export function rewriteGraph(
  index: GraphIndex,
  order: readonly OrderItem[],
  plans: readonly BucketPlan[],
): { graph: StepGraph; buckets: Bucket[] } {
  const { nodes } = index;
  const startNodes = new Map<number, GraphNode>();
  const waitNodes = new Map<number, GraphNode>();
  const buckets: Bucket[] = [];
  for (const plan of plans) {
    const members = plan.members.map((m) => nodes[m]);
    const waits = plan.members.map((m) => nodes[index.waitOfColl[m]]);
    const first = members[0];
    const c0 = first.collective!;
    const name = `bucket_${plan.id}.${c0.kind}`;
    const outputs = members.flatMap((m) => m.outputs);
    const start: GraphNode = {
      id: -1,
      name,
      kind: first.kind,
      op: first.op,
      inputs: members.flatMap((m) => m.inputs),
      outputs,
      flops: 0,
      bytesMoved: members.reduce((s, m) => s + m.bytesMoved, 0),
      matmulLike: false,
      phase: first.phase,
      layer: commonLayer(members),
      params: members.flatMap((m) => m.params ?? []),
      ...mergedEstimate(members),
      collective: {
        kind: c0.kind,
        group: c0.group,
        groupSize: c0.groupSize,
        ...(c0.groupStride !== undefined ? { groupStride: c0.groupStride } : {}), // the mesh group's layout
        dtype: c0.dtype,
        inputBytes: members.reduce((s, m) => s + m.collective!.inputBytes, 0),
        outputBytes: members.reduce((s, m) => s + m.collective!.outputBytes, 0),
        ...(c0.reduceOp !== undefined ? { reduceOp: c0.reduceOp } : {}),
        members: members.map((m) => m.name),
      },
    };
    const wait: GraphNode = {
      id: -1,
      name: `bucket_${plan.id}.wait`,
      kind: 'wait',
      op: waits[0].op,
      inputs: outputs,
      outputs: waits.flatMap((w) => w.outputs),
      flops: 0,
      bytesMoved: 0,
      matmulLike: false,
      phase: waits[0].phase,
      layer: commonLayer(waits),
      params: start.params,
      waitOf: name,
    };
    startNodes.set(plan.id, start);
    waitNodes.set(plan.id, wait);
    buckets.push({
      id: plan.id,
      kind: c0.kind,
      key: bucketKey(first),
      node: name,
      members: members.map((m) => m.name),
      bytes: members.reduce((s, m) => s + collectiveBytes(m), 0),
    });
  }
  const out: GraphNode[] = order.map((item, pos) => {
    const base =
      item.type === 'node'
        ? nodes[item.index]
        : item.type === 'bucket_start'
          ? startNodes.get(item.bucket)!
          : waitNodes.get(item.bucket)!;
    return base.id === pos ? base : { ...base, id: pos };
  });
  return { graph: { ...index.graph, nodes: out }, buckets };
}

/**
 * Imported collectives carry torch's estimates; a bucket of them is one launch: the members'
 * times less the latency every member but one no longer pays (torch's size-0 estimate).
 */
function mergedEstimate(members: readonly GraphNode[]): { estMs?: number } {
  if (members.some((m) => m.estMs === undefined)) return {};
  const latency = members.every((m) => m.estMsSize0 !== undefined)
    ? members.reduce((a, m) => Math.min(a, m.estMsSize0!), Infinity)
    : 0;
  const total = members.reduce((s, m) => s + m.estMs!, 0) - (members.length - 1) * latency;
  return {
    estMs: Math.max(
      total,
      members.reduce((a, m) => Math.max(a, m.estMs!), 0),
    ),
  };
}

/** Order items for a plain permutation of graph-index nodes. */
export function nodeItems(order: ArrayLike<number>): OrderItem[] {
  return Array.from(order as ArrayLike<number>, (index) => ({ type: 'node' as const, index }));
}
