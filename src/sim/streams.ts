// Helpers shared by the simulator's engine: collective descriptors (what ranks must agree on),
// process-group membership, bucket lookup and event construction.

import type { Schedule } from '../backends';
import { collectiveCostBytes, type GraphNode } from '../graph';
import { COMPUTE_STREAM, commStream, type StreamName, type TraceEvent } from '../trace';
import { weakMemo } from '../util';

export { sideStream } from '../trace'; // stream identities: trace/stream.ts

/** Bytes a collective is timed with: the gathered output (all-gather) or the full input (reduce-scatter). */
export function collectiveBytes(node: GraphNode): number {
  const c = node.collective;
  return c === undefined ? 0 : collectiveCostBytes(c);
}

/** What every rank must agree on at a sequence number: kind, bytes, dtype and the tensors carried. */
export function collectiveDescriptor(node: GraphNode): string {
  return descriptors(node);
}

function describeCollective(node: GraphNode): string {
  const c = node.collective;
  return c === undefined
    ? `${node.kind} ${node.name}`
    : `${c.kind} ${collectiveBytes(node)}B ${c.dtype} [${(c.members ?? [node.name]).join(', ')}]`;
}
// nodes are immutable and shared by every rank running one schedule: build each string once
const descriptors = weakMemo((node: GraphNode) => node, describeCollective);

/**
 * The ranks in `rank`'s instance of a group of `groupSize` whose members are `stride` ranks apart
 * (graph/mesh.ts: a row-major DeviceMesh, tp innermost with stride 1, dp_shard strided by tp,
 * dp_replicate by dp_shard · tp): members first, first + stride, ...; the whole world when the
 * group spans it. `key` names the instance (one comm stream each); a rank's index in it is
 * (rank − first) / stride.
 */
export function groupInstance(
  rank: number,
  groupSize: number,
  worldSize: number,
  stride = 1,
): { key: number; first: number; size: number; stride: number } {
  if (groupSize * stride >= worldSize && stride === 1) return { key: 0, first: 0, size: worldSize, stride: 1 };
  if (groupSize <= 0 || worldSize === 1) return { key: 0, first: 0, size: worldSize, stride: 1 };
  const block = groupSize * stride;
  const first = Math.floor(rank / block) * block + (rank % stride);
  return { key: first, first, size: Math.min(groupSize, Math.ceil((worldSize - first) / stride)), stride };
}

/** bucketId by the merged collective's node name. */
export function bucketIds(schedule: Schedule): Map<string, number> {
  return new Map(schedule.buckets.map((b) => [b.node, b.id]));
}

export function computeEvent(
  rank: number,
  node: GraphNode,
  start: number,
  dur: number,
  stream: StreamName = COMPUTE_STREAM,
): TraceEvent {
  return {
    rank,
    stream,
    name: node.name,
    kind: 'compute',
    start,
    dur,
    op: node.op,
    ...(node.params !== undefined ? { params: node.params } : {}),
  };
}

export function collectiveEvent(
  rank: number,
  node: GraphNode,
  start: number,
  dur: number,
  bucketId: number | undefined,
): TraceEvent {
  const c = node.collective!;
  const params = node.params ?? c.members;
  return {
    rank,
    stream: commStream(c.group),
    name: node.name,
    kind: c.kind,
    start,
    dur,
    bytes: collectiveBytes(node),
    op: node.op,
    ...(bucketId !== undefined ? { bucketId } : {}),
    ...(params !== undefined ? { params } : {}),
  };
}

export function waitEvent(rank: number, node: GraphNode, start: number, dur: number): TraceEvent {
  return { rank, stream: COMPUTE_STREAM, name: node.name, kind: 'wait', start, dur, op: node.op };
}

/**
 * A copy of an event made by computeEvent / collectiveEvent / waitEvent for another rank: the
 * same literal (same keys, same order) as the constructor built, so copying a symmetric rank's
 * events to the ranks shown is a plain allocation, not a generic object spread.
 */
export function rerankEvent(e: TraceEvent, rank: number): TraceEvent {
  const { stream, name, kind, start, dur, op, params } = e;
  if (kind === 'compute')
    return params !== undefined
      ? { rank, stream, name, kind, start, dur, op, params }
      : { rank, stream, name, kind, start, dur, op };
  if (kind === 'wait') return { rank, stream, name, kind, start, dur, op };
  const { bytes, bucketId } = e;
  if (bucketId !== undefined) {
    return params !== undefined
      ? { rank, stream, name, kind, start, dur, bytes, op, bucketId, params }
      : { rank, stream, name, kind, start, dur, bytes, op, bucketId };
  }
  return params !== undefined
    ? { rank, stream, name, kind, start, dur, bytes, op, params }
    : { rank, stream, name, kind, start, dur, bytes, op };
}

const STREAM_ORDER = (s: StreamName) => (s === COMPUTE_STREAM ? '' : s);

/** Deterministic event order: rank, start, compute before comm streams, then name. */
export function compareEvents(a: TraceEvent, b: TraceEvent): number {
  return (
    a.rank - b.rank ||
    a.start - b.start ||
    (STREAM_ORDER(a.stream) < STREAM_ORDER(b.stream) ? -1 : STREAM_ORDER(a.stream) > STREAM_ORDER(b.stream) ? 1 : 0) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}
