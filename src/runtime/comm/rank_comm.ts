// RankComm: one per rank, inside its worker. Each collective publishes a descriptor, passes the
// entry barrier (which also guarantees every rank has finished reading the previous collective's
// data), checks that all ranks agree, then moves data with the direct or ring algorithm.
// Synchronous (Atomics.wait): dedicated Workers and Node worker_threads only.

import { CollectiveError } from '../../errors';
import { firstMismatch, formatDescriptor, makeDescriptor, readDescriptor, writeDescriptor } from './descriptor';
import { directAllGather, directReduceScatter, type DataView32 } from './direct';
import { CONTROL_MAGIC, W_MAGIC, W_WORLD, controlLayout, dataElems, type ControlLayout } from './layout';
import { ringAllGather, ringReduceScatter } from './ring';
import { ControlSync, assertCanBlock } from './sync';
import type { CollectiveAlgorithm, CollectiveDescriptor, CollectiveKind, CollectiveRequest, CommInit, RankCommApi, ReduceOp } from './types';

export class RankComm implements RankCommApi {
  readonly rank: number;
  readonly worldSize: number;
  readonly algorithm: CollectiveAlgorithm;
  readonly maxElemsPerRank: number;
  private readonly layout: ControlLayout;
  private readonly sync: ControlSync;
  private readonly view: DataView32;
  private seq = 0;

  constructor(init: CommInit, rank: number) {
    const n = init.worldSize;
    if (!Number.isInteger(rank) || rank < 0 || rank >= n) {
      throw new CollectiveError('collective_config', `rank must be an integer in [0, ${n - 1}], got ${JSON.stringify(rank)}`);
    }
    this.layout = controlLayout(n);
    const words = new Int32Array(init.control);
    if (init.control.byteLength !== this.layout.bytes || words[W_MAGIC] !== CONTROL_MAGIC || words[W_WORLD] !== n) {
      throw new CollectiveError(
        'collective_config',
        `control buffer does not belong to a ${n}-rank communicator (${init.control.byteLength} bytes, ` +
          `expected ${this.layout.bytes}): build CommInit with createCommInit`,
      );
    }
    const need = dataElems(n, init.maxElemsPerRank) * 4;
    if (init.data.byteLength < need) {
      throw new CollectiveError(
        'collective_config',
        `data buffer holds ${init.data.byteLength} bytes, a ${n}-rank communicator with maxElemsPerRank=` +
          `${init.maxElemsPerRank} needs ${need} (4·n²·maxElemsPerRank)`,
      );
    }
    assertCanBlock(words);
    this.rank = rank;
    this.worldSize = n;
    this.algorithm = init.algorithm;
    this.maxElemsPerRank = init.maxElemsPerRank;
    this.sync = new ControlSync(words, new Uint8Array(init.control), this.layout, rank, init.timeoutMs);
    this.view = { data: new Float32Array(init.data), regionElems: n * init.maxElemsPerRank };
  }

  /** Sequence number the next collective will carry. */
  get nextSeq(): number {
    return this.seq;
  }

  allGather(desc: CollectiveRequest, input: Float32Array, output: Float32Array): void {
    const n = this.worldSize;
    const where = `all_gather '${desc.label}'`;
    this.checkShape(where, output.length === n * input.length,
      `output has ${output.length} elems, expected worldSize × input = ${n} × ${input.length}`);
    this.checkFits(where, input.length, 'shard (input)');
    const seq = this.enter('all_gather', n * input.length, desc);
    if (this.algorithm === 'ring') ringAllGather(this.view, this.sync, input, output, where, seq);
    else directAllGather(this.view, this.sync, input, output, where, seq);
  }

  reduceScatter(desc: CollectiveRequest, input: Float32Array, output: Float32Array, op: ReduceOp): void {
    const n = this.worldSize;
    const where = `reduce_scatter '${desc.label}'`;
    this.checkShape(where, op === 'sum' || op === 'avg', `op must be one of [sum, avg], got ${JSON.stringify(op)}`);
    this.checkShape(where, input.length === n * output.length,
      `input has ${input.length} elems, expected worldSize × output = ${n} × ${output.length}`);
    this.checkFits(where, output.length, 'shard (output chunk)');
    const seq = this.enter('reduce_scatter', input.length, desc);
    if (this.algorithm === 'ring') ringReduceScatter(this.view, this.sync, input, output, op, where, seq);
    else directReduceScatter(this.view, this.sync, input, output, op, where, seq);
  }

  barrier(label: string): void {
    this.enter('barrier', 0, { label, tensors: [label] });
  }

  abort(reason: string): void {
    this.sync.abort(reason);
  }

  /** Publish the descriptor, pass the entry barrier, compare with every rank. Returns the seq. */
  private enter(kind: CollectiveKind, elems: number, req: CollectiveRequest): number {
    const seq = this.seq++;
    const mine = makeDescriptor(seq, kind, elems, kind === 'barrier' ? [req.label] : req.tensors, req.label);
    const where = `${formatDescriptor(mine)} '${req.label}'`;
    this.sync.checkAbort(where);
    writeDescriptor(this.sync.words, this.sync.bytes, this.layout, this.rank, mine);
    this.sync.barrier(where, seq);
    const all: CollectiveDescriptor[] = [];
    for (let r = 0; r < this.worldSize; r++) all.push(readDescriptor(this.sync.words, this.sync.bytes, this.layout, r, seq));
    const bad = firstMismatch(all);
    if (bad >= 0) {
      throw new CollectiveError(
        'collective_mismatch',
        `collective mismatch at seq ${seq}: rank 0 ${formatDescriptor(all[0])} vs rank ${bad} ${formatDescriptor(all[bad])}` +
          ` (seen by rank ${this.rank}; every rank must issue the same collectives in the same order)`,
      );
    }
    return seq;
  }

  /** A local shape error would leave the other ranks waiting: abort them, then throw. */
  private checkShape(where: string, ok: boolean, problem: string): void {
    if (ok) return;
    const msg = `${where} on rank ${this.rank}: ${problem}`;
    this.sync.abort(msg);
    throw new CollectiveError('collective_shape', msg);
  }

  private checkFits(where: string, shardElems: number, what: string): void {
    const m = this.maxElemsPerRank;
    this.checkShape(where, shardElems <= m,
      `${what} of ${shardElems} elems (${shardElems * 4} bytes) exceeds the data buffer's per-rank shard of ` +
        `${m} elems (${m * 4} bytes; data buffer ${this.view.data.byteLength} bytes for ${this.worldSize} ranks): ` +
        'size createCommInit(worldSize, maxElemsPerRank) from the schedule\'s largest bucket');
  }
}
