// A small mutable emitter the builder appends nodes and tensors to; the result is frozen
// into an immutable StepGraph. Names and ids are checked unique as they are added, so a
// builder bug fails at the offending node.

import { MATMUL_LIKE_OPS } from './ops';
import { GraphError } from './errors';
import { tensorBytes } from './flops';
import type { CollectiveInfo, DType, GraphNode, NodeKind, Phase, TensorInfo } from './types';

export interface NodeSpec {
  readonly name: string;
  readonly kind: NodeKind;
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly flops?: number;
  readonly bytesMoved?: number;
  readonly params?: readonly string[];
  readonly collective?: CollectiveInfo;
  readonly waitOf?: string;
  readonly attrs?: Readonly<Record<string, number | string | boolean>>;
  readonly estMs?: number;
  readonly matmulLike?: boolean;
}

export class Emitter {
  readonly nodes: GraphNode[] = [];
  readonly tensors: Record<string, TensorInfo> = {};
  /** Tensor id → id of the node that wrote it. */
  readonly producer = new Map<string, number>();
  private readonly names = new Set<string>();
  phase: Phase = 'forward';
  layer: number | undefined = undefined;

  /** Registers a tensor and returns its id. */
  tensor(id: string, shape: readonly number[], dtype: DType, extra?: { persistent?: boolean; aliasOf?: string }): string {
    if (this.tensors[id]) throw new GraphError(`tensor id '${id}' defined twice`);
    this.tensors[id] = {
      id,
      shape: [...shape],
      dtype,
      bytes: tensorBytes(shape, dtype),
      ...(extra?.persistent ? { persistent: true } : {}),
      ...(extra?.aliasOf !== undefined ? { aliasOf: extra.aliasOf } : {}),
    };
    return id;
  }

  node(s: NodeSpec): GraphNode {
    if (this.names.has(s.name)) throw new GraphError(`node name '${s.name}' used twice`, this.nodes.length, s.name, s.kind, s.inputs);
    this.names.add(s.name);
    const n: GraphNode = {
      id: this.nodes.length,
      name: s.name,
      kind: s.kind,
      op: s.op,
      inputs: [...s.inputs],
      outputs: [...s.outputs],
      flops: s.flops ?? 0,
      bytesMoved: s.bytesMoved ?? 0,
      matmulLike: s.matmulLike ?? (s.kind === 'compute' && MATMUL_LIKE_OPS.has(s.op)),
      phase: this.phase,
      ...(this.layer === undefined ? {} : { layer: this.layer }),
      ...(s.params ? { params: [...s.params] } : {}),
      ...(s.collective ? { collective: s.collective } : {}),
      ...(s.waitOf !== undefined ? { waitOf: s.waitOf } : {}),
      ...(s.attrs ? { attrs: { ...s.attrs } } : {}),
      ...(s.estMs !== undefined ? { estMs: s.estMs } : {}),
    };
    this.nodes.push(n);
    for (const t of n.outputs) if (!this.producer.has(t)) this.producer.set(t, n.id);
    return n;
  }
}
