// One step-graph node for cost-model tests: a forward compute node with nothing in it, and the
// fields a test gives.
import type { GraphNode } from '../../src/graph/types';

export function graphNode(extra: Partial<GraphNode>): GraphNode {
  return {
    id: 0,
    name: 'n',
    kind: 'compute',
    op: 'add',
    inputs: [],
    outputs: [],
    flops: 0,
    bytesMoved: 0,
    matmulLike: false,
    phase: 'forward',
    ...extra,
  };
}
