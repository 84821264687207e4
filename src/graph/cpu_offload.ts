// graph_trainer's CPU activation offload (`--compile.memory_policy sac_and_offload`), as a pass
// over a built step graph. Upstream: torchtitan experiments/graph_trainer/cpu_offload.py
// (tag_all_offloadable_activations, apply_cpu_offload_pass, defer_offload_waits, prefetch_reloads)
// on torch's torch/_functorch/_activation_offloading/offload_ops.py (ao::offload, ao::reload,
// ao::wait_tensor).
//  - which tensors: after the default SAC tags, every saved activation — a forward compute
//    node's output that a backward node reads — of every block but the last (its activations are
//    read at once by the backward), at least 4 KB, never a view, collective or wait; largest first
//    within cpu_offload_budget_gb (100 GiB per rank by default).
//  - forward: `ao.offload` right after the producer copies the tensor to pinned host memory on the
//    one dedicated transfer stream, after what the compute stream issued before it; its
//    `ao.wait_tensor(keepalive=gpu)` on the compute stream waits for the copy and frees the HBM
//    storage, deferred to the end of the next layer's forward (cpu_offload_defer_n_layers 1).
//  - backward: `ao.reload` copies it back on the same transfer stream into a fresh HBM tensor,
//    prefetched to the start of the next layer's backward (cpu_offload_prefetch_n_layers 1), and
//    the backward readers read that (they wait for the copy: a CUDA event wait).
// Copies run on their own stream and overlap compute; one stream carries both directions, so
// copies queue behind each other. Their time is bytes over the host link (estimate/compute.ts).

import { numel } from './flops';
import type { GraphNode, StepGraph, TensorInfo } from './types';

/** The side stream every ao copy runs on (offload_ops.py `_transfer_streams`: one per device). */
export const TRANSFER_STREAM = 'ao_transfer';
/** torchtitan's cpu_offload_budget_gb default, GB as it counts them (1024³ bytes). */
const CPU_OFFLOAD_BUDGET_BYTES = 100 * 1024 ** 3;
/** cpu_offload.py _MIN_OFFLOAD_BYTES: smaller tensors are not worth a copy. */
const MIN_OFFLOAD_BYTES = 4096;

export type TransferDirection = 'd2h' | 'h2d';

/** The host-link direction of an ao copy node; undefined for every other node. */
export function hostTransferOf(node: GraphNode): TransferDirection | undefined {
  const t = node.attrs?.transfer;
  return t === 'd2h' || t === 'h2d' ? t : undefined;
}

/** A tensor's bytes in HBM: none for a host tensor. */
export function hbmBytes(info: TensorInfo | undefined): number {
  return info === undefined || info.host === true ? 0 : info.bytes;
}

interface Offloaded {
  readonly tensor: TensorInfo;
  readonly producer: number; // position of its producer
  readonly layer: number;
}

/** graph_trainer's tag_all_offloadable_activations on the built graph: what is offloaded, in graph order. */
export function offloadCandidates(g: StepGraph, budgetBytes = CPU_OFFLOAD_BUDGET_BYTES): Offloaded[] {
  const layers = g.nodes.flatMap((n) => (n.layer === undefined ? [] : [n.layer]));
  const lastLayer = new Set(layers).size > 1 ? Math.max(...layers) : undefined;
  const readInBackward = new Set(g.nodes.filter((n) => n.phase === 'backward').flatMap((n) => n.inputs));
  const found: Offloaded[] = [];
  g.nodes.forEach((n, producer) => {
    if (n.phase !== 'forward' || n.layer === undefined || n.layer === lastLayer) return;
    if (n.kind !== 'compute' && n.kind !== 'cast') return;
    for (const id of n.outputs) {
      const tensor = g.tensors[id];
      if (tensor === undefined || tensor.aliasOf !== undefined || tensor.bytes < MIN_OFFLOAD_BYTES) continue;
      if (readInBackward.has(id)) found.push({ tensor, producer, layer: n.layer });
    }
  });
  const bySize = [...found].sort((a, b) => b.tensor.bytes - a.tensor.bytes);
  const chosen = new Set<Offloaded>();
  let total = 0;
  for (const c of bySize) {
    if (budgetBytes > 0 && total + c.tensor.bytes > budgetBytes) continue; // the next smaller one may fit
    chosen.add(c);
    total += c.tensor.bytes;
  }
  return found.filter((c) => chosen.has(c));
}

/** Inserts the ao copies and waits for `offloaded` (offloadCandidates) and redirects the backward readers. */
export function applyCpuOffload(g: StepGraph, offloaded: readonly Offloaded[]): StepGraph {
  if (offloaded.length === 0) return g;
  const after = new Map<number, GraphNode[]>();
  const before = new Map<number, GraphNode[]>();
  const put = (m: Map<number, GraphNode[]>, pos: number, n: GraphNode) => m.set(pos, [...(m.get(pos) ?? []), n]);
  const tensors: Record<string, TensorInfo> = { ...g.tensors };
  const reloaded = new Map<string, string>();
  const anchors = placementAnchors(g);
  for (const o of offloaded) {
    const ids = copyIds(o.tensor.id);
    tensors[ids.host] = { ...o.tensor, id: ids.host, host: true };
    tensors[ids.hostReady] = { ...o.tensor, id: ids.hostReady, aliasOf: ids.host };
    tensors[ids.reloaded] = { ...o.tensor, id: ids.reloaded };
    reloaded.set(o.tensor.id, ids.reloaded);
    put(after, o.producer, copyNode(`${o.tensor.id}.offload`, 'd2h', [o.tensor.id], ids.host, 'forward', o));
    put(after, anchors.offloadWait(o), waitNode(o, ids));
  }
  // prefetch_reloads moves them in the order of their first backward readers, each just before its anchor
  for (const o of [...offloaded].sort((a, b) => anchors.firstBackwardRead(a) - anchors.firstBackwardRead(b))) {
    const ids = copyIds(o.tensor.id);
    put(
      before,
      anchors.reload(o),
      copyNode(`${o.tensor.id}.reload`, 'h2d', [ids.hostReady], ids.reloaded, 'backward', o),
    );
  }
  const nodes: GraphNode[] = [];
  g.nodes.forEach((n, i) => {
    nodes.push(...(before.get(i) ?? []));
    nodes.push(n.phase === 'backward' ? readReloaded(n, reloaded) : n);
    nodes.push(...(after.get(i) ?? []));
  });
  return { ...g, nodes: nodes.map((n, id) => (n.id === id ? n : { ...n, id })), tensors };
}

function copyIds(id: string) {
  return { host: `${id}.cpu`, hostReady: `${id}.cpu.ready`, reloaded: `${id}.reloaded` };
}

/** An ao copy: no FLOPs, its bytes over the host link (the runtime runs it as a plain copy). */
function copyNode(
  name: string,
  transfer: TransferDirection,
  inputs: string[],
  output: string,
  phase: 'forward' | 'backward',
  o: Offloaded,
): GraphNode {
  const n = numel(o.tensor.shape);
  return {
    id: -1,
    name,
    kind: 'compute',
    op: 'copy',
    inputs,
    outputs: [output],
    flops: 0,
    bytesMoved: o.tensor.bytes,
    matmulLike: false,
    phase,
    layer: o.layer,
    attrs: { n, transfer },
  };
}

/** ao.wait_tensor(host, keepalive=gpu): the compute stream waits for the D2H copy, then frees the HBM tensor. */
function waitNode(o: Offloaded, ids: ReturnType<typeof copyIds>): GraphNode {
  return {
    id: -1,
    name: `${o.tensor.id}.offload_wait`,
    kind: 'view',
    op: 'ao.wait_tensor',
    inputs: [ids.host, o.tensor.id],
    outputs: [ids.hostReady],
    flops: 0,
    bytesMoved: 0,
    matmulLike: false,
    phase: 'forward',
    layer: o.layer,
  };
}

function readReloaded(n: GraphNode, reloaded: ReadonlyMap<string, string>): GraphNode {
  if (!n.inputs.some((id) => reloaded.has(id))) return n;
  return { ...n, inputs: n.inputs.map((id) => reloaded.get(id) ?? id) };
}

/**
 * Where the waits and reloads go: a wait after the last node of the forward region one layer past
 * its producer's (never before the tensor's last forward reader); a reload before the first
 * backward node of the next layer (the backward's first node when there is none), never after
 * its first backward reader.
 */
function placementAnchors(g: StepGraph) {
  const regionEnd: number[] = []; // forward regions: runs of one layer value, their last positions
  const regionOf = new Map<number, number>();
  const firstBackward = g.nodes.findIndex((n) => n.phase === 'backward');
  const forwardEnd = firstBackward < 0 ? g.nodes.length : firstBackward;
  for (let i = 0; i < forwardEnd; i++) {
    if (i === 0 || g.nodes[i].layer !== g.nodes[i - 1].layer) regionEnd.push(i);
    regionEnd[regionEnd.length - 1] = i;
    regionOf.set(i, regionEnd.length - 1);
  }
  const lastForwardRead = new Map<string, number>();
  const firstBackwardRead = new Map<string, number>();
  const firstBackwardOfLayer = new Map<number, number>();
  g.nodes.forEach((n, i) => {
    if (n.phase === 'forward') for (const id of n.inputs) lastForwardRead.set(id, i);
    if (n.phase !== 'backward') return;
    for (const id of n.inputs) if (!firstBackwardRead.has(id)) firstBackwardRead.set(id, i);
    if (n.layer !== undefined && !firstBackwardOfLayer.has(n.layer)) firstBackwardOfLayer.set(n.layer, i);
  });
  return {
    offloadWait: (o: Offloaded): number => {
      const lastUse = regionOf.get(lastForwardRead.get(o.tensor.id) ?? o.producer) ?? 0;
      const target = Math.max((regionOf.get(o.producer) ?? 0) + 1, lastUse);
      return regionEnd[Math.min(target, regionEnd.length - 1)];
    },
    reload: (o: Offloaded): number => {
      const prefetched = firstBackwardOfLayer.get(o.layer + 1) ?? firstBackward;
      return Math.min(prefetched, firstBackwardRead.get(o.tensor.id) ?? prefetched);
    },
    firstBackwardRead: (o: Offloaded): number => firstBackwardRead.get(o.tensor.id) ?? g.nodes.length,
  };
}
