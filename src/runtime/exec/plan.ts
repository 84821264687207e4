// Execution plan of a schedule for one rank: what each node does in live mode (run a kernel,
// alias a tensor, copy a padded view, call a collective) and when each storage is last read,
// so the executor can release it right after. Built once per schedule and cached.

import type { GraphNode, StepGraph, TensorInfo } from '../../graph';
import { DTYPE_BYTES, LOSS, TARGETS, TOKENS, paramTensorIds } from '../../graph';
import type { ElemType } from '../kernels';
import { FsdpSimError } from '../../errors';
import { weakMemo } from '../../util';

type NodeAction =
  | 'compute' // kernels.run
  | 'alias' // fp32 cast, same-size view, wait: the output is the input's storage
  | 'copy_view' // a view / fp32 cast that drops (prefix) or adds (zero padding) trailing elements
  | 'all_gather'
  | 'reduce_scatter'
  | 'all_reduce'
  | 'all_to_all';

export interface ExecPlan {
  readonly actions: readonly NodeAction[];
  /** Storage (root id) → index of the last node that reads it; absent: kept (persistent/result). */
  readonly lastUse: ReadonlyMap<string, number>;
  /** Tensor id → the id whose storage it shares. */
  readonly rootOf: ReadonlyMap<string, string>;
  /** Tensor ids the rank keeps after the step (loss, next param/optimizer state). */
  readonly keep: ReadonlySet<string>;
}

/** Live-mode tensors are fp32, except the token ids (i32 in the graph, or named TOKENS / TARGETS). */
export function elemTypeOf(tensors: Readonly<Record<string, TensorInfo>>, id: string): ElemType {
  return tensors[id]?.dtype === 'i32' || id === TOKENS || id === TARGETS ? 'i32' : 'f32';
}

/** Element count of a graph tensor (from bytes and dtype). */
export function elemsOf(tensors: Readonly<Record<string, TensorInfo>>, id: string): number {
  const t = tensors[id];
  if (t === undefined) throw new FsdpSimError('runtime', `tensor '${id}' is not in the graph's tensor table`);
  return t.bytes / DTYPE_BYTES[t.dtype];
}

function actionOf(graph: StepGraph, node: GraphNode): NodeAction {
  switch (node.kind) {
    case 'compute':
      return 'compute';
    case 'all_gather':
    case 'reduce_scatter':
    case 'all_reduce':
    case 'all_to_all':
      return node.kind;
    case 'wait':
      return 'alias';
    case 'cast': {
      const from = graph.tensors[node.inputs[0]]?.dtype;
      const to = graph.tensors[node.outputs[0]]?.dtype;
      if (from !== to) {
        throw new FsdpSimError(
          'runtime',
          `node ${node.id} '${node.name}': live mode runs fp32 only, cast ${from} → ${to} is not supported (build ` +
            `the graph with paramDtype and reduceDtype 'fp32')`,
        );
      }
      // fp32 → fp32 with padRows: the gradient gains zero rows before the reduce-scatter.
      return elemsOf(graph.tensors, node.inputs[0]) === elemsOf(graph.tensors, node.outputs[0]) ? 'alias' : 'copy_view';
    }
    case 'view': {
      const a = elemsOf(graph.tensors, node.inputs[0]);
      const b = elemsOf(graph.tensors, node.outputs[0]);
      return a === b ? 'alias' : 'copy_view';
    }
  }
}

const plans = weakMemo((graph: StepGraph) => graph, buildPlan);

/** Plan a graph (cached per graph object). */
export function planGraph(graph: StepGraph): ExecPlan {
  return plans(graph);
}

function buildPlan(graph: StepGraph): ExecPlan {
  const actions: NodeAction[] = [];
  const rootOf = new Map<string, string>();
  const root = (id: string) => rootOf.get(id) ?? id;
  const lastUse = new Map<string, number>();
  const keep = new Set<string>([LOSS]);
  for (const p of graph.params) {
    const ids = paramTensorIds(p.name);
    keep.add(ids.shardNext).add(ids.mNext).add(ids.vNext);
  }
  for (const node of graph.nodes) {
    const action = actionOf(graph, node);
    actions.push(action);
    if (action === 'alias') {
      // ao.wait_tensor (CPU offload) reads a second input it only keeps alive
      if (node.inputs.length !== node.outputs.length + (node.op === 'ao.wait_tensor' ? 1 : 0)) {
        throw new FsdpSimError(
          'runtime',
          `node ${node.id} '${node.name}' (${node.kind}) has ${node.inputs.length} inputs but ${node.outputs.length} ` +
            `outputs; an alias needs one input per output`,
        );
      }
      node.outputs.forEach((o, i) => rootOf.set(o, root(node.inputs[i])));
    }
    for (const id of node.inputs) lastUse.set(root(id), node.id);
    // An output nobody reads is released right after its producer.
    for (const id of node.outputs) if (!lastUse.has(root(id))) lastUse.set(root(id), node.id);
  }
  for (const [id, t] of Object.entries(graph.tensors)) if (t.persistent) keep.add(id);
  for (const id of keep) lastUse.delete(root(id));
  return { actions, lastUse, rootOf, keep };
}
