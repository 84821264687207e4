// Contract of the SharedArrayBuffer collectives the rank workers use in live mode: the init data the
// coordinator posts to each worker, the descriptor every collective publishes, and the RankComm API.
// Synchronous and Atomics.wait-based: runs in dedicated Workers and Node worker_threads only.
// Algorithms: docs/ARCHITECTURE.md §6; the ring variant sums in ring order (torchtitan #2042).

import { ConfigError, oneOfMessage } from '../../errors';
import { CONTROL_MAGIC, W_MAGIC, W_WORLD, controlLayout, dataElems } from './layout';

export type CollectiveAlgorithm = 'direct' | 'ring';
export const COLLECTIVE_ALGORITHMS: readonly CollectiveAlgorithm[] = ['direct', 'ring'];

export type CommOpKind = 'all_gather' | 'reduce_scatter' | 'barrier' | 'all_to_all';
export type ReduceOp = 'sum' | 'avg';

/** What a rank publishes in the control buffer before every collective; all ranks must agree. */
export interface CollectiveDescriptor {
  readonly seq: number; // 0-based count of collectives (barriers included) on this communicator
  readonly kind: CommOpKind;
  readonly elems: number; // unsharded elements: all_gather output, reduce_scatter input; 0: barrier, all_to_all
  readonly tensorsHash: number; // FNV-1a 32 of the tensor names joined by '\n'
  readonly label: string; // the caller's label (node / bucket name; cut to LABEL_CHARS), not compared
  readonly tensorsText: string; // `[a, b]`, cut to fit the slot; shown in mismatch errors
}

/** What the caller passes per collective: a label (node / bucket name) and the member tensor names. */
export interface CollectiveRequest {
  readonly label: string;
  readonly tensors: readonly string[];
}

/** Plain data (two SABs and numbers): postMessage it to every rank worker. */
export interface CommInit {
  readonly worldSize: number;
  readonly control: SharedArrayBuffer;
  readonly data: SharedArrayBuffer;
  readonly maxElemsPerRank: number; // largest shard (reduce_scatter output / all_gather input), f32 elements
  readonly timeoutMs: number; // every wait gives up after this, naming the missing rank(s)
  readonly algorithm: CollectiveAlgorithm;
  /** A mesh sub-group: its name and members' global ranks (position i = global rank ranks[i]); messages name both. */
  readonly group?: CommGroup;
  /** Fixed spin before sleeping, µs (sync.ts fixedSpinUs: the run's rank threads vs cores); absent: adaptive. */
  readonly spinUs?: number;
}

export interface CommGroup {
  readonly name: string;
  readonly ranks: readonly number[];
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** The per-rank communicator (implemented by RankComm in rank_comm.ts). */
export interface RankCommApi {
  readonly rank: number;
  readonly worldSize: number;
  /** input: this rank's shard (a bucket: member shards concatenated); output: worldSize × input.length, rank-major. */
  allGather(desc: CollectiveRequest, input: Float32Array, output: Float32Array): void;
  /**
   * input: worldSize chunks, rank-major (chunk r goes to rank r); output: input.length / worldSize. 'avg' divides by
   * worldSize after the sum.
   */
  reduceScatter(desc: CollectiveRequest, input: Float32Array, output: Float32Array, op: ReduceOp): void;
  /** input and output: the same length, any (a reduce-scatter of the zero-padded input, then an all-gather). */
  allReduce(desc: CollectiveRequest, input: Float32Array, output: Float32Array, op: ReduceOp): void;
  /**
   * torch's all_to_all_single with split sizes (f32 elements): input holds sendSplits[j] elements for rank j, in rank
   * order; output gets recvSplits[i] from rank i, in rank order. Rank i's sendSplits[j] must equal rank j's
   * recvSplits[i]; a difference throws collective_mismatch on every rank naming the pair. Zero sizes are allowed.
   */
  allToAll(
    desc: CollectiveRequest,
    input: Float32Array,
    output: Float32Array,
    sendSplits: readonly number[],
    recvSplits: readonly number[],
  ): void;
  barrier(label: string): void;
  /** Optional hook told of every wait at a barrier (performance.now ms at start and end): the step breakdown. */
  onWait?: ((startMs: number, endMs: number) => void) | undefined;
  /** Wakes every waiting rank; they throw CollectiveError naming this rank and the reason. */
  abort(reason: string): void;
}

/**
 * Coordinator side: allocate the control and data SABs for `worldSize` ranks whose largest shard is
 * `maxElemsPerRank` f32 elements (size it from the schedule's largest bucket). Data bytes = 4·n²·max
 * plus two latency areas (layout.ts).
 */
export function createCommInit(
  worldSize: number,
  maxElemsPerRank: number,
  opts: { timeoutMs?: number; algorithm?: CollectiveAlgorithm; group?: CommGroup; spinUs?: number } = {},
): CommInit {
  if (typeof SharedArrayBuffer === 'undefined') {
    throw new ConfigError(
      'SharedArrayBuffer',
      'SharedArrayBuffer is undefined: the page must be cross-origin isolated (COOP same-origin + COEP require-corp)',
    );
  }
  if (!Number.isInteger(worldSize) || worldSize < 1) {
    throw new ConfigError('worldSize', `worldSize must be an integer ≥ 1, got ${JSON.stringify(worldSize)}`);
  }
  if (!Number.isInteger(maxElemsPerRank) || maxElemsPerRank < 0) {
    throw new ConfigError(
      'maxElemsPerRank',
      `maxElemsPerRank must be an integer ≥ 0, got ${JSON.stringify(maxElemsPerRank)}`,
    );
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new ConfigError('timeoutMs', `timeoutMs must be > 0, got ${JSON.stringify(timeoutMs)}`);
  const algorithm = opts.algorithm ?? 'direct';
  if (!COLLECTIVE_ALGORITHMS.includes(algorithm)) {
    throw new ConfigError('algorithm', oneOfMessage('algorithm', COLLECTIVE_ALGORITHMS, algorithm));
  }
  const layout = controlLayout(worldSize);
  const control = new SharedArrayBuffer(layout.bytes);
  const words = new Int32Array(control);
  words[W_MAGIC] = CONTROL_MAGIC;
  words[W_WORLD] = worldSize;
  const data = new SharedArrayBuffer(dataElems(worldSize, maxElemsPerRank) * 4);
  if (opts.group !== undefined && opts.group.ranks.length !== worldSize) {
    throw new ConfigError('group.ranks', `group.ranks must list ${worldSize} ranks, got ${opts.group.ranks.length}`);
  }
  if (opts.spinUs !== undefined && !(Number.isFinite(opts.spinUs) && opts.spinUs >= 0)) {
    throw new ConfigError('spinUs', `spinUs must be a number ≥ 0 (µs), got ${JSON.stringify(opts.spinUs)}`);
  }
  const extra = {
    ...(opts.group ? { group: opts.group } : {}),
    ...(opts.spinUs !== undefined ? { spinUs: opts.spinUs } : {}),
  };
  return { worldSize, control, data, maxElemsPerRank, timeoutMs, algorithm, ...extra };
}
