// Discrete-event simulator of one training step on N ranks (docs/ARCHITECTURE.md §5).
// Per rank: one compute stream that runs the schedule in order, and one comm stream per process
// group. A collective node is an *issue* (free on the compute stream); the collective starts when
// every rank of its group has issued it and the group's stream is free (collectives on a group run
// in issue order, one NCCL stream per group), and lasts the cost model's estimate (the slowest
// rank's when ranks differ). A wait blocks the compute stream until its collective ends.
// A backend may put non-collective nodes on side streams (schedule.sideStreams: FSDP2's copy-in), and
// graph_trainer's CPU offload copies run on their transfer stream (graph/cpu_offload.ts):
// such a node is enqueued when the compute stream reaches it (the CPU issues in program order),
// runs when its stream is free, and whatever reads its outputs starts after it ends (a CUDA event
// wait); the compute stream goes on meanwhile. A host copy is the copy engine's, not the SMs', so
// collectives in flight do not slow it.
// Ranks that issue different collectives at the same sequence number are reported (the hang
// torch's cross-rank alignment prevents) and stop there; the simulation always terminates.

import type { Schedule } from '../backends';
import type { CostModel } from '../estimate';
import { ConfigError, FsdpSimError } from '../errors';
import { hostTransferOf, isCollectiveKind, TRANSFER_STREAM, type GraphNode } from '../graph';
import type { MemoryCurve, StreamName, TraceEvent } from '../trace';
import { bucketCopies, type BucketCopies } from './bucket_copies';
import { CommBusy } from './contention';
import { fastMemoryCurve } from './memory_curve';
import {
  bucketIds,
  collectiveBytes,
  collectiveDescriptor,
  collectiveEvent,
  compareEvents,
  computeEvent,
  groupInstance,
  rerankEvent,
  sideStream,
  waitEvent,
} from './streams';
import { copyEventsToRanks, copyMemoryToRanks, EMIT_ALL_BELOW, isSymmetric } from './symmetric';
import type { CollectiveMismatch, SimOptions, SimResult } from './sim_types';

interface Issue {
  readonly rank: number;
  readonly node: GraphNode;
  readonly pos: number;
  readonly timeUs: number;
  readonly desc: string;
}

/** One collective instance: the seq-th collective on one instance of a group. */
interface Inst {
  readonly streamKey: string;
  readonly seq: number;
  readonly first: number; // first rank of the group instance
  readonly stride: number; // rank distance of its members
  readonly issues: (Issue | undefined)[]; // by (rank − first) / stride
  firstIssue?: Issue; // what later ranks are compared against
  count: number;
  endUs?: number;
}

interface RankState {
  readonly rank: number;
  readonly nodes: readonly GraphNode[];
  readonly schedule: Schedule;
  readonly cost: CostModel;
  readonly buckets: Map<string, number>;
  readonly emit: boolean;
  /**
   * Per node position, for the memory curve; length 0 on ranks whose curve nobody asked for (typed-array writes past
   * the end are no-ops).
   */
  readonly startUs: Float64Array;
  readonly endUs: Float64Array;
  readonly seqByGroup: Map<string, number>;
  readonly issued: Map<string, Inst>; // collective node name → instance
  /** Side-stream nodes by name (absent: the schedule has none), each stream's free time, µs. */
  readonly sides?: ReadonlyMap<string, StreamName>;
  readonly sideFreeUs: Map<StreamName, number>;
  /** Tensor id → when the side-stream node that wrote it ends, µs. */
  readonly sideReadyUs: Map<string, number>;
  readonly events: TraceEvent[];
  /** The copy kernels of the schedule's buckets (bucket_copies.ts). */
  readonly copies: BucketCopies;
  /** This rank's collectives in flight, which slow its compute (contention.ts). */
  readonly busy: CommBusy;
  pos: number;
  tUs: number; // compute stream free at
  lastEndUs: number;
  halted: boolean;
}

class Engine {
  private readonly insts = new Map<string, Inst>();
  private readonly commFreeUs = new Map<string, number>();
  mismatch?: CollectiveMismatch;

  constructor(
    private readonly ranks: RankState[],
    private readonly worldSize: number,
  ) {}

  run(): void {
    for (let progressed = true; progressed; ) {
      progressed = false;
      for (const s of this.ranks) if (this.advance(s)) progressed = true;
    }
  }

  /** Runs rank `s` until it blocks, halts or finishes; true when it moved. */
  private advance(s: RankState): boolean {
    const start = s.pos;
    while (!s.halted && s.pos < s.nodes.length) {
      const node = s.nodes[s.pos];
      if (isCollectiveKind(node.kind)) {
        if (!this.issue(s, node)) break;
      } else if (node.kind === 'wait') {
        if (!this.wait(s, node)) break;
      } else {
        const side = s.sides?.get(node.name);
        if (side === undefined) this.compute(s, node);
        else this.side(s, node, side);
      }
      s.pos++;
    }
    return s.pos !== start;
  }

  private compute(s: RankState, node: GraphNode): void {
    s.tUs = Math.max(s.tUs, sideReady(s, node));
    s.busy.prune(s.tUs);
    const dur = s.busy.finish(s.tUs, s.cost.computeUs(node), s.cost.overlapSlowdown ?? 0) - s.tUs;
    s.startUs[s.pos] = s.tUs;
    s.endUs[s.pos] = s.tUs + dur;
    if (s.emit && dur > 0) s.events.push(computeEvent(s.rank, node, s.tUs, dur));
    s.tUs += dur;
    s.lastEndUs = Math.max(s.lastEndUs, s.tUs);
  }

  /** A side-stream node: after the compute stream reaches it, its stream frees and its inputs are written. */
  private side(s: RankState, node: GraphNode, stream: StreamName): void {
    const dur = s.cost.computeUs(node);
    const startUs = Math.max(s.tUs, s.sideFreeUs.get(stream) ?? 0, sideReady(s, node));
    const slowdown = hostTransferOf(node) === undefined ? (s.cost.overlapSlowdown ?? 0) : 0;
    const endUs = s.busy.finish(startUs, dur, slowdown);
    s.sideFreeUs.set(stream, endUs);
    for (const t of node.outputs) s.sideReadyUs.set(t, endUs);
    // ao.reload allocates its output on the compute stream when issued, before its copy waits for the stream
    s.startUs[s.pos] = hostTransferOf(node) === undefined ? startUs : s.tUs;
    s.endUs[s.pos] = endUs;
    if (s.emit && dur > 0) s.events.push(computeEvent(s.rank, node, startUs, endUs - startUs, stream));
    s.lastEndUs = Math.max(s.lastEndUs, endUs);
  }

  private issue(s: RankState, node: GraphNode): boolean {
    const c = node.collective;
    if (c === undefined)
      throw new FsdpSimError(
        'schedule',
        `node '${node.name}' (position ${s.pos}, rank ${s.rank}) is a ${node.kind} without collective info`,
      );
    const g = groupInstance(s.rank, c.groupSize, this.worldSize, c.groupStride);
    const seq = s.seqByGroup.get(c.group) ?? 0;
    const streamKey = `${c.group}#${g.key}`;
    const key = `${streamKey}#${seq}`;
    let inst = this.insts.get(key);
    if (inst === undefined) {
      inst = { streamKey, seq, first: g.first, stride: g.stride, issues: new Array(g.size).fill(undefined), count: 0 };
      this.insts.set(key, inst);
    }
    const copyIn = s.copies.copyIn.get(node.name);
    if (copyIn !== undefined) this.copy(s, copyIn);
    const issueT = s.tUs + s.cost.computeUs(node); // ~0: the issue itself
    // the collective starts once its inputs are written (a copy-in on a side stream may end later)
    const readyT = Math.max(issueT, sideReady(s, node));
    const mine: Issue = { rank: s.rank, node, pos: s.pos, timeUs: readyT, desc: collectiveDescriptor(node) };
    const other = inst.firstIssue;
    if (other !== undefined && other.desc !== mine.desc) {
      this.mismatch ??= {
        seq,
        ranks: [other.rank, s.rank],
        ops: [other.desc, mine.desc],
        timeUs: Math.max(other.timeUs, issueT),
      };
      s.halted = true;
      return false;
    }
    s.seqByGroup.set(c.group, seq + 1);
    inst.issues[(s.rank - inst.first) / inst.stride] = mine;
    inst.firstIssue ??= mine;
    inst.count++;
    s.issued.set(node.name, inst);
    s.startUs[s.pos] = s.tUs;
    s.endUs[s.pos] = Number.NaN; // known when the collective ends
    s.tUs = issueT;
    if (inst.count === inst.issues.length) this.resolve(inst);
    return true;
  }

  /** Every rank has issued: start when the last one did and the group's stream is free. */
  private resolve(inst: Inst): void {
    const issues = inst.issues as Issue[];
    let startUs = this.commFreeUs.get(inst.streamKey) ?? 0;
    let durUs = 0;
    for (const is of issues) {
      startUs = Math.max(startUs, is.timeUs);
      const c = is.node.collective!;
      // an imported collective keeps the estimate torch used for it
      const cost = this.ranks[this.rankIndex(is.rank)].cost;
      const est =
        is.node.estMs !== undefined
          ? is.node.estMs * 1000
          : cost.collectiveUs(c.kind, collectiveBytes(is.node), c.groupSize, c.dtype, c.groupStride);
      durUs = Math.max(durUs, est);
    }
    const endUs = startUs + durUs;
    inst.endUs = endUs;
    this.commFreeUs.set(inst.streamKey, endUs);
    for (const is of issues) {
      const s = this.ranks[this.rankIndex(is.rank)];
      s.endUs[is.pos] = endUs;
      s.lastEndUs = Math.max(s.lastEndUs, endUs);
      s.busy.add(startUs, endUs);
      if (s.emit) s.events.push(collectiveEvent(s.rank, is.node, startUs, durUs, s.buckets.get(is.node.name)));
    }
    // done: waits only need endUs; drop the per-rank issues (1024 ranks × every collective)
    this.insts.delete(`${inst.streamKey}#${inst.seq}`);
    issues.length = 0;
  }

  private rankIndex(rank: number): number {
    return this.ranks.length === 1 ? 0 : rank;
  }

  private wait(s: RankState, node: GraphNode): boolean {
    if (node.waitOf === undefined) {
      s.startUs[s.pos] = s.endUs[s.pos] = s.tUs;
      return true;
    }
    const inst = s.issued.get(node.waitOf);
    if (inst === undefined)
      throw new FsdpSimError(
        'schedule',
        `wait '${node.name}' (position ${s.pos}, rank ${s.rank}) waits for '${node.waitOf}', which this rank has not ` +
          `issued before it`,
      );
    if (inst.endUs === undefined) return false; // blocked until every rank issues it
    s.startUs[s.pos] = s.tUs;
    if (inst.endUs > s.tUs) {
      if (s.emit) s.events.push(waitEvent(s.rank, node, s.tUs, inst.endUs - s.tUs));
      s.tUs = inst.endUs;
    }
    s.endUs[s.pos] = s.tUs;
    for (const copyOut of s.copies.copyOut.get(node.name) ?? []) this.copy(s, copyOut);
    return true;
  }

  /** A bucket's copy kernel on the compute stream (bucket_copies.ts). */
  private copy(s: RankState, node: GraphNode): void {
    const dur = s.busy.finish(s.tUs, s.cost.computeUs(node), s.cost.overlapSlowdown ?? 0) - s.tUs;
    if (s.emit && dur > 0) s.events.push(computeEvent(s.rank, node, s.tUs, dur));
    s.tUs += dur;
    s.lastEndUs = Math.max(s.lastEndUs, s.tUs);
  }

  /** After a stall without a descriptor mismatch: a rank never issued what another is waiting on. */
  missingCollective(): CollectiveMismatch | undefined {
    for (const s of this.ranks) {
      if (s.pos >= s.nodes.length || s.halted) continue;
      const node = s.nodes[s.pos];
      const inst = node.waitOf !== undefined ? s.issued.get(node.waitOf) : undefined;
      if (inst === undefined || inst.endUs !== undefined) continue;
      const issuer = inst.firstIssue!;
      const missing = inst.first + inst.issues.indexOf(undefined) * inst.stride;
      const m = this.ranks[this.rankIndex(missing)];
      const where = m.pos >= m.nodes.length ? 'finished its schedule' : `blocked at '${m.nodes[m.pos].name}'`;
      return {
        seq: inst.seq,
        ranks: [issuer.rank, missing],
        ops: [issuer.desc, `nothing (rank ${missing} ${where})`],
        timeUs: issuer.timeUs,
      };
    }
    return undefined;
  }
}

/** When the last side-stream writer of `node`'s inputs ends, µs (0: none). */
function sideReady(s: RankState, node: GraphNode): number {
  if (s.sideReadyUs.size === 0) return 0;
  let t = 0;
  for (const id of node.inputs) t = Math.max(t, s.sideReadyUs.get(id) ?? 0);
  return t;
}

function sidesOf(schedule: Schedule): ReadonlyMap<string, StreamName> | undefined {
  const sides = Object.entries(schedule.sideStreams ?? {});
  for (const n of schedule.graph.nodes) if (hostTransferOf(n) !== undefined) sides.push([n.name, TRANSFER_STREAM]);
  if (sides.length === 0) return undefined;
  return new Map(sides.map(([node, stream]) => [node, sideStream(stream)]));
}

function memoryCurve(s: RankState): MemoryCurve {
  return fastMemoryCurve(s.rank, s.schedule.graph.tensors, s.nodes, s.pos, s.startUs, s.endUs, s.lastEndUs);
}

function perRank<T>(field: string, x: T | readonly T[], worldSize: number): (r: number) => T {
  if (!Array.isArray(x)) return () => x as T;
  const arr = x as readonly T[];
  if (arr.length !== worldSize)
    throw new ConfigError(field, `${field} must have one entry per rank (${worldSize}), got ${arr.length}`);
  return (r) => arr[r];
}

export function simulate(opts: SimOptions): SimResult {
  const { worldSize } = opts;
  if (!Number.isInteger(worldSize) || worldSize < 1)
    throw new ConfigError('worldSize', `worldSize must be an integer ≥ 1, got ${worldSize}`);
  const scheduleOf = perRank('schedules', opts.schedules, worldSize);
  const costOf = perRank('cost', opts.cost, worldSize);
  const symmetric = isSymmetric(opts.schedules, opts.cost);
  // default: every rank in small worlds; rank 0 alone in large ones (symmetric or not: 1024 ranks
  // of a 16k-node step would be 16M events), pass emitRanks to see others
  const everyRank = Array.from({ length: worldSize }, (_, r) => r);
  const emitRanks = opts.emitRanks ?? (worldSize < EMIT_ALL_BELOW ? everyRank : [0]);
  for (const r of emitRanks)
    if (!Number.isInteger(r) || r < 0 || r >= worldSize)
      throw new ConfigError('emitRanks', `emitRanks entries must be integers in [0, ${worldSize - 1}], got ${r}`);
  const emitSet = new Set(emitRanks);

  const simRanks = symmetric ? [0] : Array.from({ length: worldSize }, (_, r) => r);
  const states: RankState[] = simRanks.map((rank) => {
    const schedule = scheduleOf(rank);
    const nodes = schedule.graph.nodes;
    const emit = symmetric ? emitSet.size > 0 : emitSet.has(rank);
    return {
      rank,
      nodes,
      schedule,
      cost: costOf(rank),
      buckets: bucketIds(schedule),
      emit,
      // 1024 ranks × 16k nodes of timestamps is 256 MB: keep them only where a curve is emitted
      startUs: new Float64Array(emit ? nodes.length : 0),
      endUs: new Float64Array(emit ? nodes.length : 0),
      seqByGroup: new Map(),
      issued: new Map(),
      events: [],
      pos: 0,
      tUs: 0,
      lastEndUs: 0,
      halted: false,
      sides: sidesOf(schedule),
      sideFreeUs: new Map(),
      sideReadyUs: new Map(),
      copies: bucketCopies(schedule),
      busy: new CommBusy(),
    };
  });
  // symmetric: a world of one, where every collective starts when issued (all ranks issue together)
  const engine = new Engine(states, symmetric ? 1 : worldSize);
  engine.run();
  const mismatch = engine.mismatch ?? engine.missingCollective();

  const stepUs = Math.max(0, ...states.map((s) => s.lastEndUs));
  let events: TraceEvent[];
  let memory: MemoryCurve[];
  const ordered = [...emitSet].sort((a, b) => a - b);
  if (symmetric) {
    const s = states[0];
    s.events.sort(compareEvents);
    events = ordered.length === 0 ? [] : copyEventsToRanks(s.events, ordered, rerankEvent);
    memory = ordered.length === 0 ? [] : copyMemoryToRanks(memoryCurve(s), ordered);
  } else {
    const emitted = states.filter((s) => s.emit);
    events = emitted.flatMap((s) => s.events).sort(compareEvents);
    memory = emitted.map(memoryCurve);
  }
  return { worldSize, symmetric, events, memory, stepUs, ...(mismatch !== undefined ? { mismatch } : {}) };
}
