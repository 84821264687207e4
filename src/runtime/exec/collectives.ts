// Collective nodes in live mode: move a (possibly bucketed) all-gather or reduce-scatter through
// the SharedArrayBuffer communicator. Bucket convention (src/backends): the merged node's inputs
// are the members' inputs in member order and its outputs the members' outputs in member order.
//  - all_gather: input = member shards concatenated [s1 | s2 | ...]; the output is rank-major,
//    slot r = [s1_r | s2_r | ...], so member i's full tensor is slot 0..n-1's segment i in order.
//  - reduce_scatter: input is rank-major, chunk r = [g1 rows of rank r | g2 rows of rank r | ...];
//    the output [g1_shard | g2_shard | ...] is split back into the members' grad shards.
//  - all_reduce: inputs and outputs pair up member by member, each the same length.
// Each collective runs on the communicator of its process group (a 1-D run has one, 'dp').
// The data moves synchronously (Atomics); the time a collective takes comes from the virtual clock.
// A bucket costs one readback (downloadAll) however many members it has, and its host staging
// arrays are reused from call to call (each is consumed before the call returns).

import type { GraphNode } from '../../graph';
import type { RankCommApi } from '../comm';
import type { DeviceTensor, KernelBackend, UploadPart } from '../kernels';
import { FsdpSimError } from '../../errors';

/** The part of the communicator the executor uses. */
export type ExecComm = Pick<
  RankCommApi,
  'worldSize' | 'allGather' | 'reduceScatter' | 'allReduce' | 'allToAll' | 'onWait'
>;

/** A rank's communicators by process-group name: one per group the rank belongs to. */
export type GroupComms = ReadonlyMap<string, ExecComm>;

/** The communicator of process group `group`; `who` names the node asking, for the error. */
export function groupComm(comms: GroupComms, group: string, who: string): ExecComm {
  const comm = comms.get(group);
  if (comm === undefined) {
    const has = [...comms.keys()].join(', ');
    throw new FsdpSimError('runtime', `${who}: no communicator for process group '${group}' (this rank has: ${has})`);
  }
  return comm;
}

/** The communicator of `node`'s process group. */
export const commFor = (node: GraphNode, comms: GroupComms): ExecComm =>
  groupComm(comms, node.collective?.group ?? 'dp', `node ${node.id} '${node.name}'`);

/** Host staging reused across collectives: slot → the largest array asked for so far. */
const scratch = new Map<'in' | 'out' | 'grads', Float32Array>();
function host(slot: 'in' | 'out' | 'grads', elems: number): Float32Array {
  let a = scratch.get(slot);
  if (a === undefined || a.length < elems) scratch.set(slot, (a = new Float32Array(elems)));
  return a.subarray(0, elems);
}

function request(node: GraphNode) {
  return { label: node.name, tensors: node.collective?.members ?? [node.name] };
}

function checkDivisible(node: GraphNode, id: string, len: number, n: number): void {
  if (len % n !== 0) {
    throw new FsdpSimError(
      'runtime',
      `node ${node.id} '${node.name}': tensor '${id}' has ${len} elements, not divisible by the ${n} ranks`,
    );
  }
}

/** All-gather: `ins` are this rank's shards, `outs` the full tensors (created by the caller). */
export async function runAllGather(
  node: GraphNode,
  kernels: KernelBackend,
  comm: ExecComm,
  ins: readonly DeviceTensor[],
  outs: readonly DeviceTensor[],
): Promise<void> {
  const n = comm.worldSize;
  if (ins.length !== outs.length) {
    throw new FsdpSimError(
      'runtime',
      `node ${node.id} '${node.name}': all_gather has ${ins.length} inputs but ${outs.length} outputs`,
    );
  }
  const total = ins.reduce((s, t) => s + t.length, 0); // elements per rank slot
  const input = host('in', total);
  const offsets: number[] = [];
  let at = 0;
  for (const t of ins) {
    offsets.push(at);
    at += t.length;
  }
  await kernels.downloadAll(ins.map((t, i) => ({ t, into: input.subarray(offsets[i], offsets[i] + t.length) })));
  ins.forEach((t, i) => {
    if (outs[i].length !== n * t.length) {
      throw new FsdpSimError(
        'runtime',
        `node ${node.id} '${node.name}': all_gather output '${outs[i].id}' has ${outs[i].length} elements, expected ` +
          `${n} × ${t.length}`,
      );
    }
  });
  const output = host('out', n * total);
  comm.allGather(request(node), input, output);
  // One upload for the bucket: member i's full tensor is slot 0..n−1's segment i, in rank order.
  const parts: UploadPart[] = [];
  ins.forEach((t, i) => {
    for (let r = 0; r < n; r++)
      parts.push({ t: outs[i], from: r * total + offsets[i], length: t.length, at: r * t.length });
  });
  kernels.uploadScatter(output, parts);
}

/** [0, x0, x0 + x1, …]: where each member starts when the members are laid end to end. */
function prefixSums(xs: readonly number[]): number[] {
  const out: number[] = [];
  let s = 0;
  for (const x of xs) {
    out.push(s);
    s += x;
  }
  return out;
}

/** Reduce-scatter (avg): `ins` are the full gradients, `outs` this rank's shards (created by the caller). */
export async function runReduceScatter(
  node: GraphNode,
  kernels: KernelBackend,
  comm: ExecComm,
  ins: readonly DeviceTensor[],
  outs: readonly DeviceTensor[],
): Promise<void> {
  const n = comm.worldSize;
  if (ins.length !== outs.length) {
    throw new FsdpSimError(
      'runtime',
      `node ${node.id} '${node.name}': reduce_scatter has ${ins.length} inputs but ${outs.length} outputs`,
    );
  }
  const chunkOf = ins.map((t) => {
    checkDivisible(node, t.id, t.length, n);
    return t.length / n;
  });
  chunkOf.forEach((c, i) => {
    if (outs[i].length !== c) {
      throw new FsdpSimError(
        'runtime',
        `node ${node.id} '${node.name}': reduce_scatter output '${outs[i].id}' has ${outs[i].length} elements, ` +
          `expected ${c}`,
      );
    }
  });
  const perRank = chunkOf.reduce((s, c) => s + c, 0); // output elements
  // Member-major as read back ([g1 | g2 | …]), then rank-major for the communicator.
  const starts = prefixSums(chunkOf); // member i's chunk starts at starts[i] within a rank's part
  const grads = host('grads', n * perRank);
  const gradOf = (i: number) => grads.subarray(n * starts[i], n * (starts[i] + chunkOf[i]));
  await kernels.downloadAll(ins.map((t, i) => ({ t, into: gradOf(i) })));
  const input = host('in', n * perRank);
  for (let i = 0; i < ins.length; i++) {
    const c = chunkOf[i];
    const g = gradOf(i);
    for (let r = 0; r < n; r++) input.set(g.subarray(r * c, (r + 1) * c), r * perRank + starts[i]);
  }
  const output = host('out', perRank);
  const op = node.collective?.reduceOp ?? 'avg';
  comm.reduceScatter(request(node), input, output, op);
  kernels.uploadScatter(
    output,
    outs.map((t, i) => ({ t, from: starts[i], length: chunkOf[i], at: 0 })),
  );
}

/** All-reduce: `ins[i]` reduced across the group into `outs[i]` (created by the caller); one readback a bucket. */
export async function runAllReduce(
  node: GraphNode,
  kernels: KernelBackend,
  comm: ExecComm,
  ins: readonly DeviceTensor[],
  outs: readonly DeviceTensor[],
): Promise<void> {
  if (ins.length !== outs.length || ins.some((t, i) => outs[i].length !== t.length)) {
    const what = `node ${node.id} '${node.name}'`;
    throw new FsdpSimError('runtime', `${what}: all_reduce needs one output of the same length per input`);
  }
  const starts = prefixSums(ins.map((t) => t.length));
  const total = ins.reduce((s, t) => s + t.length, 0);
  const input = host('in', total);
  await kernels.downloadAll(ins.map((t, i) => ({ t, into: input.subarray(starts[i], starts[i] + t.length) })));
  const output = host('out', total);
  comm.allReduce(request(node), input, output, node.collective?.reduceOp ?? 'sum');
  kernels.uploadScatter(
    output,
    outs.map((t, i) => ({ t, from: starts[i], length: t.length, at: 0 })),
  );
}
