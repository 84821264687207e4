// A small mutable emitter the builder appends nodes and tensors to; the result is frozen
// into an immutable StepGraph. Names and ids are checked unique as they are added, so a
// builder bug fails at the offending node.

import { MATMUL_LIKE_OPS } from './ops';
import { GraphError } from './graph_errors';
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
  readonly estMsSize0?: number;
  readonly sizeBytes?: number;
  readonly matmulLike?: boolean;
}

export class Emitter {
  readonly nodes: GraphNode[] = [];
  // no prototype: tensor ids are user strings in an imported graph ('constructor', '__proto__')
  readonly tensors: Record<string, TensorInfo> = Object.create(null);
  private readonly names = new Set<string>();
  private producerMap: Map<string, number> | null = null;
  phase: Phase = 'forward';
  layer: number | undefined = undefined;

  /** Tensor id → id of the node that wrote it first (built on first use, then kept up to date). */
  get producer(): Map<string, number> {
    if (this.producerMap === null) {
      const m = new Map<string, number>();
      for (const n of this.nodes) for (const t of n.outputs) if (!m.has(t)) m.set(t, n.id);
      this.producerMap = m;
    }
    return this.producerMap;
  }

  /** Registers a tensor and returns its id. */
  tensor(
    id: string,
    shape: readonly number[],
    dtype: DType,
    extra?: {
      persistent?: boolean;
      aliasOf?: string;
      bytes?: number;
    },
  ): string {
    if (this.tensors[id] !== undefined) throw new GraphError(`tensor id '${id}' defined twice`);
    // fields assigned in a fixed order (the same as the spread form had): one shape per variant
    const bytes = extra?.bytes ?? tensorBytes(shape, dtype);
    const t: { -readonly [K in keyof TensorInfo]: TensorInfo[K] } = { id, shape: shape.slice(), dtype, bytes };
    if (extra?.persistent) t.persistent = true;
    if (extra?.aliasOf !== undefined) t.aliasOf = extra.aliasOf;
    this.tensors[id] = t;
    return id;
  }

  node(s: NodeSpec): GraphNode {
    const before = this.names.size;
    this.names.add(s.name);
    if (this.names.size === before)
      throw new GraphError(`node name '${s.name}' used twice`, this.nodes.length, s.name, s.kind, s.inputs);
    const n: { -readonly [K in keyof GraphNode]: GraphNode[K] } = {
      id: this.nodes.length,
      name: s.name,
      kind: s.kind,
      op: s.op,
      inputs: s.inputs.slice(),
      outputs: s.outputs.slice(),
      flops: s.flops ?? 0,
      bytesMoved: s.bytesMoved ?? 0,
      matmulLike: s.matmulLike ?? (s.kind === 'compute' && MATMUL_LIKE_OPS.has(s.op)),
      phase: this.phase,
    };
    // optional fields in the order the graph JSON has always had them
    if (this.layer !== undefined) n.layer = this.layer;
    if (s.params) n.params = s.params.slice();
    if (s.collective) n.collective = s.collective;
    if (s.waitOf !== undefined) n.waitOf = s.waitOf;
    if (s.attrs) n.attrs = { ...s.attrs };
    if (s.estMs !== undefined) n.estMs = s.estMs;
    if (s.estMsSize0 !== undefined) n.estMsSize0 = s.estMsSize0;
    if (s.sizeBytes !== undefined) n.sizeBytes = s.sizeBytes;
    this.nodes.push(n);
    const pm = this.producerMap;
    if (pm !== null) for (const t of n.outputs) if (!pm.has(t)) pm.set(t, n.id);
    return n;
  }

  /**
   * Rewrites the nodes from position `from` on (a pass over what was just emitted): `keep` gives a
   * node's replacement, or undefined to drop it. Kept nodes are renumbered; a dropped node's name
   * and output tensors are forgotten.
   */
  rewriteFrom(from: number, keep: (n: GraphNode) => GraphNode | undefined): void {
    for (const n of this.nodes.splice(from)) {
      const m = keep(n);
      if (m !== undefined) {
        this.nodes.push({ ...m, id: this.nodes.length });
        continue;
      }
      this.names.delete(n.name);
      for (const t of n.outputs) delete this.tensors[t];
    }
    this.producerMap = null;
  }
}
