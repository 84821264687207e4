// RankComm: one per rank, inside its worker. Each collective publishes its descriptor (direct: and
// its data, once nobody still reads the area it overwrites), passes ONE barrier, checks that all
// ranks agree, then reads (direct) or runs the ring steps, and marks itself done reading.
// Synchronous (Atomics.wait): dedicated Workers and Node worker_threads only.

import { CollectiveError } from '../../errors';
import {
  encodeDescriptorText,
  firstMismatch,
  formatDescriptor,
  makeDescriptor,
  readDescriptor,
  slotsAgree,
  writeDescriptor,
} from './descriptor';
import {
  directAllGatherEarly,
  directAllGatherRest,
  directAllGatherWrite,
  directReduceScatterEarly,
  directReduceScatterRest,
  directReduceScatterWrite,
  placement,
  reduceScatterSources,
  type DataView32,
  type Placement,
} from './direct';
import {
  CONTROL_MAGIC,
  W_MAGIC,
  W_WORLD,
  controlLayout,
  dataElems,
  latencyAreaElems,
  type ControlLayout,
} from './layout';
import {
  directAllToAllRead,
  directAllToAllWrite,
  firstSplitMismatch,
  splitMismatchText,
  splitsProblem,
  writeSplits,
} from './all_to_all';
import { ringAllGather, ringReduceScatter } from './ring';
import { ControlSync, assertCanBlock } from './sync';
import type {
  CollectiveAlgorithm,
  CollectiveDescriptor,
  CommOpKind,
  CollectiveRequest,
  CommInit,
  RankCommApi,
  ReduceOp,
} from './comm_types';

/**
 * Maps this rank's region of the data SAB in now (one write fault per 4 KiB page), off the timed
 * path: otherwise the first all-gather on the second parity area pays its page faults. The
 * value-preserving Atomics.add(…, 0) is safe while other ranks already write there.
 */
function prefaultRegion(data: SharedArrayBuffer, startElem: number, endElem: number): void {
  const words = new Int32Array(data);
  for (let i = startElem; i < endElem; i += 1024) Atomics.add(words, i, 0);
}

/** Distinct requests whose descriptor is kept ready (the cache is dropped whole when full). */
const PUBLISHED_CACHE = 4096;

export class RankComm implements RankCommApi {
  readonly rank: number;
  readonly worldSize: number;
  readonly algorithm: CollectiveAlgorithm;
  readonly maxElemsPerRank: number;
  private readonly layout: ControlLayout;
  private readonly sync: ControlSync;
  private readonly view: DataView32;
  private seq = 0;
  private where = ''; // the current collective, as timeout and abort messages name it
  private readonly copied: Uint8Array; // all-gather: shards already in the output, by rank
  private readonly published = new Map<string, { d: CollectiveDescriptor; text: Uint8Array; where: string }>();
  private readonly arrived = (q: number): boolean => this.sync.hasArrived(q);
  /**
   * Where the previous collective left data others may still read (direct only): a gather area, or all regions (a
   * latency area never blocks the next).
   */
  private lastRead: 'none' | 0 | 1 | 'all' = 'none';
  /** ` on group 'tp' (ranks 2, 3)` for a mesh sub-group, '' for the world: what messages add to where a rank was. */
  private readonly groupText: string;
  private readonly allReduceScratch = {
    padded: new Float32Array(0),
    part: new Float32Array(0),
    full: new Float32Array(0),
  };

  constructor(init: CommInit, rank: number) {
    const n = init.worldSize;
    if (!Number.isInteger(rank) || rank < 0 || rank >= n) {
      throw new CollectiveError(
        'collective_config',
        `rank must be an integer in [0, ${n - 1}], got ${JSON.stringify(rank)}`,
      );
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
          `${init.maxElemsPerRank} needs ${need} (4·n²·maxElemsPerRank plus two latency areas)`,
      );
    }
    assertCanBlock(words);
    this.rank = rank;
    this.worldSize = n;
    this.algorithm = init.algorithm;
    this.maxElemsPerRank = init.maxElemsPerRank;
    const bytes = new Uint8Array(init.control);
    this.sync = new ControlSync(words, bytes, this.layout, rank, init.timeoutMs, {
      ...(init.group ? { globalRanks: init.group.ranks } : {}),
      ...(init.spinUs !== undefined ? { spinUs: init.spinUs } : {}),
    });
    this.groupText = init.group ? ` on group '${init.group.name}' (ranks ${init.group.ranks.join(', ')})` : '';
    const regionElems = n * init.maxElemsPerRank;
    this.view = {
      data: new Float32Array(init.data),
      regionElems,
      latencyBase: n * regionElems,
      latencyElems: latencyAreaElems(n, init.maxElemsPerRank),
    };
    this.copied = new Uint8Array(n);
    prefaultRegion(init.data, rank * this.view.regionElems, (rank + 1) * this.view.regionElems);
  }

  /** Told of every barrier / done wait this rank sleeps or spins in (performance.now ms). */
  set onWait(fn: ((startMs: number, endMs: number) => void) | undefined) {
    this.sync.onWait = fn;
  }
  get onWait(): ((startMs: number, endMs: number) => void) | undefined {
    return this.sync.onWait;
  }

  /** Sequence number the next collective will carry. */
  get nextSeq(): number {
    return this.seq;
  }

  allGather(desc: CollectiveRequest, input: Float32Array, output: Float32Array): void {
    const n = this.worldSize;
    const where = `all_gather '${desc.label}'${this.groupText}`;
    this.checkShape(
      where,
      output.length === n * input.length,
      `output has ${output.length} elems, expected worldSize × input = ${n} × ${input.length}`,
    );
    this.checkFits(where, input.length, 'shard (input)');
    const seq = this.publish('all_gather', n * input.length, desc);
    if (this.algorithm === 'ring') {
      this.agree(seq);
      ringAllGather(this.view, this.sync, input, output, where, seq);
    } else {
      const at = placement(this.view, 'all_gather', n, input.length, seq);
      this.waitForReaders(at, where, seq);
      directAllGatherWrite(this.view, n, this.rank, at, input);
      this.sync.arrive();
      directAllGatherEarly(this.view, n, this.rank, at, input, output, this.copied, this.arrived);
      this.agreeArrived(seq);
      directAllGatherRest(this.view, n, at, input.length, output, this.copied);
      this.lastRead = at.reads === 'latency' ? 'none' : at.reads;
    }
    this.sync.finish();
  }

  reduceScatter(desc: CollectiveRequest, input: Float32Array, output: Float32Array, op: ReduceOp): void {
    const n = this.worldSize;
    const where = `reduce_scatter '${desc.label}'${this.groupText}`;
    this.checkShape(where, op === 'sum' || op === 'avg', `op must be one of [sum, avg], got ${JSON.stringify(op)}`);
    this.checkShape(
      where,
      input.length === n * output.length,
      `input has ${input.length} elems, expected worldSize × output = ${n} × ${output.length}`,
    );
    this.checkFits(where, output.length, 'shard (output chunk)');
    const seq = this.publish('reduce_scatter', input.length, desc);
    if (this.algorithm === 'ring') {
      this.agree(seq);
      ringReduceScatter(this.view, this.sync, input, output, op, where, seq);
    } else {
      const at = placement(this.view, 'reduce_scatter', n, output.length, seq);
      this.waitForReaders(at, where, seq);
      directReduceScatterWrite(this.view, n, this.rank, at, input);
      this.sync.arrive();
      const sources = reduceScatterSources(this.view, n, this.rank, at, input, output.length);
      const folded = directReduceScatterEarly(sources, this.rank, output, this.arrived); // while others still write
      this.agreeArrived(seq);
      directReduceScatterRest(sources, folded, output, op);
      this.lastRead = at.reads === 'latency' ? 'none' : at.reads;
    }
    this.sync.finish();
  }

  allReduce(desc: CollectiveRequest, input: Float32Array, output: Float32Array, op: ReduceOp): void {
    const n = this.worldSize;
    this.checkShape(
      `all_reduce '${desc.label}'${this.groupText}`,
      output.length === input.length,
      `output has ${output.length} elems, expected the input's ${input.length}`,
    );
    const chunk = Math.ceil(input.length / n);
    const padded = this.scratch('padded', n * chunk);
    padded.set(input);
    padded.fill(0, input.length);
    const part = this.scratch('part', chunk);
    const step = (kind: string) => ({ label: `${desc.label} (all_reduce: ${kind})`, tensors: desc.tensors });
    this.reduceScatter(step('reduce_scatter'), padded, part, op);
    const full = this.scratch('full', n * chunk);
    this.allGather(step('all_gather'), part, full);
    output.set(full.subarray(0, input.length));
  }

  /** A reusable all-reduce staging array of exactly `elems` elements (grown, never shrunk). */
  private scratch(slot: 'padded' | 'part' | 'full', elems: number): Float32Array {
    if (this.allReduceScratch[slot].length < elems) this.allReduceScratch[slot] = new Float32Array(elems);
    return this.allReduceScratch[slot].subarray(0, elems);
  }

  allToAll(
    desc: CollectiveRequest,
    input: Float32Array,
    output: Float32Array,
    sendSplits: readonly number[],
    recvSplits: readonly number[],
  ): void {
    const n = this.worldSize;
    const where = `all_to_all '${desc.label}'${this.groupText}`;
    const problem =
      splitsProblem('sendSplits', sendSplits, n, input.length, 'the input') ??
      splitsProblem('recvSplits', recvSplits, n, output.length, 'the output');
    this.checkShape(where, problem === undefined, problem ?? '');
    this.checkShape(
      where,
      n === 1 || input.length <= this.view.regionElems,
      `input of ${input.length} elems exceeds the data buffer's per-rank region of ${this.view.regionElems} elems ` +
        '(worldSize × maxElemsPerRank): size createCommInit from the largest all-to-all input',
    );
    const seq = this.publish('all_to_all', 0, desc);
    writeSplits(this.sync.words, this.layout, this.rank, seq, sendSplits, recvSplits);
    // Writes every region: wait for seq − 1's readers (ring collectives read regions too).
    if (this.algorithm === 'ring' || this.lastRead !== 'none') {
      this.sync.waitFinished(`${where} (others reading seq ${seq - 1})`, seq);
    }
    if (n > 1) directAllToAllWrite(this.view, this.rank, input);
    this.agree(seq);
    const bad = firstSplitMismatch(this.sync.words, this.layout, seq);
    if (bad) {
      throw new CollectiveError(
        'collective_mismatch',
        `all_to_all split mismatch at seq ${seq} '${desc.label}'${this.groupText}: ` +
          `${splitMismatchText(bad, (r) => this.sync.rankName(r))} (seen by rank ${this.sync.rankName(this.rank)}; ` +
          "rank i's sendSplits[j] must equal rank j's recvSplits[i])",
      );
    }
    directAllToAllRead(this.view, this.sync.words, this.layout, this.rank, seq, input, output);
    this.lastRead = 'all';
    this.sync.finish();
  }

  barrier(label: string): void {
    this.agree(this.publish('barrier', 0, { label, tensors: [label] }));
    this.lastRead = 'none'; // the barrier ordered every earlier read before anything after it
    this.sync.finish();
  }

  abort(reason: string): void {
    this.sync.abort(reason);
  }

  /**
   * Before writing at `at`: wait until every rank has read seq − 1's data where it overlaps. Barrier
   * seq − 1 ordered every read of seq − 2, so only seq − 1's reads can be in the way; a latency area
   * never is (seq − 1 used the other one, or the regions).
   */
  private waitForReaders(at: Placement, where: string, seq: number): void {
    const clash =
      at.reads === 'latency'
        ? false
        : at.reads === 'all'
          ? this.lastRead !== 'none'
          : this.lastRead === 'all' || this.lastRead === at.reads;
    if (clash) this.sync.waitFinished(`${where} (others reading seq ${seq - 1})`, seq);
  }

  /** Write this rank's descriptor into its slot for the next seq; returns the seq. */
  private publish(kind: CommOpKind, elems: number, req: CollectiveRequest): number {
    const seq = this.seq++;
    const names = kind === 'barrier' ? [req.label] : req.tensors;
    // Training repeats the same collectives every step: hash, text and message are built once per request.
    const key = JSON.stringify([kind, elems, req.label, names]); // unambiguous, whatever the names hold
    let hit = this.published.get(key);
    if (!hit) {
      const d = makeDescriptor(0, kind, elems, names, req.label);
      hit = { d, text: encodeDescriptorText(d), where: `${formatDescriptor(d)} '${req.label}'${this.groupText}` };
      if (this.published.size >= PUBLISHED_CACHE) this.published.clear();
      this.published.set(key, hit);
    }
    this.where = hit.where;
    this.sync.checkAbort(this.where);
    writeDescriptor(this.sync.words, this.sync.bytes, this.layout, this.rank, { ...hit.d, seq }, hit.text);
    return seq;
  }

  /** The collective's one barrier, then every rank compares all descriptors with rank 0's. */
  private agree(seq: number): void {
    this.sync.arrive();
    this.agreeArrived(seq);
  }

  /** agree() after this rank has already arrived. */
  private agreeArrived(seq: number): void {
    this.sync.waitArrived(this.where, seq);
    if (slotsAgree(this.sync.words, this.layout, this.worldSize, seq)) return;
    const all: CollectiveDescriptor[] = [];
    for (let r = 0; r < this.worldSize; r++)
      all.push(readDescriptor(this.sync.words, this.sync.bytes, this.layout, r, seq));
    const bad = firstMismatch(all);
    const name = (r: number) => this.sync.rankName(r);
    if (bad >= 0) {
      throw new CollectiveError(
        'collective_mismatch',
        `collective mismatch at seq ${seq}${this.groupText}: ` +
          `rank ${name(0)} ${formatDescriptor(all[0])} vs rank ${name(bad)} ${formatDescriptor(all[bad])} ` +
          `(seen by rank ${name(this.rank)}; every rank must issue the same collectives in the same order)`,
      );
    }
  }

  /** A local shape error would leave the other ranks waiting: abort them, then throw. */
  private checkShape(where: string, ok: boolean, problem: string): void {
    if (ok) return;
    const msg = `${where} on rank ${this.sync.rankName(this.rank)}: ${problem}`;
    this.sync.abort(msg);
    throw new CollectiveError('collective_shape', msg);
  }

  private checkFits(where: string, shardElems: number, what: string): void {
    const m = this.maxElemsPerRank;
    this.checkShape(
      where,
      shardElems <= m,
      `${what} of ${shardElems} elems (${shardElems * 4} bytes) exceeds the data buffer's per-rank shard of ` +
        `${m} elems (${m * 4} bytes; data buffer ${this.view.data.byteLength} bytes for ${this.worldSize} ranks): ` +
        "size createCommInit(worldSize, maxElemsPerRank) from the schedule's largest bucket",
    );
  }
}
