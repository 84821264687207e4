// One rank's training loop, free of any environment (no Worker, no DOM, no GPU creation): the
// browser Worker shell (rank.worker.ts) and the Node worker_threads shell (rank_node.worker.ts)
// both call `runRank` with their kernel backend and communicator. Also the message protocol
// between the coordinator and the rank workers. On a mesh a rank joins one communicator per process
// group (mesh_ranks.ts), trains on its data-parallel rows and holds its TP slice's FSDP shard.

import type { Schedule } from '../backends';
import { TARGETS, TOKENS, isMoeOp, paramTensorIds } from '../graph';
import { RankComm, type CommInit } from './comm';
import type { DeviceTensor, KernelBackend, KernelUse } from './kernels';
import { FsdpSimError } from '../errors';
import { rankBatch, type DataConfig } from './data';
import {
  PhaseClock,
  executeStep,
  moeKernelsOf,
  timedKernels,
  type GroupComms,
  type PhaseInterval,
  type StepPhases,
} from './exec';
import { initFullParam, shardOf } from './init';
import { dataParallelRank, isEpSplit, meshIndex, meshLocalParam, meshOfGraph, meshSlice } from './mesh_ranks';
import type { ResolvedKernels, StartupEvent } from './startup';
import type { KernelChoice } from './live_options';

/** Everything a rank needs for a run; plain data (structured-clone safe). */
export interface RankRunConfig {
  readonly rank: number;
  readonly worldSize: number;
  readonly steps: number;
  readonly seed: number; // parameter init seed (the data seed lives in `data`)
  readonly data: DataConfig;
  readonly lr?: number;
  /** Time every compute node on the device (measured timing mode). */
  readonly measure: boolean;
  /** Testing: this rank throws at the start of this step (error handling end to end). */
  readonly injectFault?: { readonly rank: number; readonly step: number };
}

interface RankStepReport {
  readonly step: number; // 1-based
  readonly loss: number; // this rank's local mean loss
  readonly nodeUs?: Readonly<Record<string, number>>;
  /** Where the step's wall time went on this rank (ms). */
  readonly phases: StepPhases;
  /** The step's timed intervals (measured timing mode only): the wall-clock timeline. */
  readonly intervals?: readonly PhaseInterval[];
}

/** Coordinator → worker. */
export interface RankInitMessage {
  readonly type: 'init';
  readonly run: RankRunConfig;
  /** One communicator per process group this rank belongs to. */
  readonly comms: readonly GroupCommInit[];
  readonly schedule: Schedule;
  readonly kernels: KernelChoice;
}

/** A process group's communicator as one member gets it: the group's name and this rank's place in it. */
export interface GroupCommInit {
  readonly group: string;
  readonly init: CommInit;
  readonly localRank: number;
}

/** Coordinator → worker, once every rank is ready (kernels up): begin step 1. */
export interface RankStartMessage {
  readonly type: 'start';
}

/** Worker → coordinator. */
export type RankMessage =
  /** Start-up progress (startup.ts); the first 'compiling' names the kernels the rank got. */
  | {
      readonly type: 'startup';
      readonly rank: number;
      readonly event: StartupEvent;
      readonly kernels?: Omit<ResolvedKernels, 'choice'>;
    }
  | { readonly type: 'ready'; readonly rank: number; readonly device: string }
  | ({ readonly type: 'step'; readonly rank: number } & RankStepReport)
  | { readonly type: 'done'; readonly rank: number; readonly shards: readonly Float32Array[] }
  | {
      readonly type: 'error';
      readonly rank: number;
      readonly name: string;
      readonly code?: string;
      readonly message: string;
      readonly stack?: string;
    };

/** The error message a worker posts (and then aborts the communicator). */
function errorMessage(rank: number, e: unknown): RankMessage {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  return {
    type: 'error',
    rank,
    name: err.name,
    message: err.message,
    stack: err.stack,
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/** Upload this rank's initial parameter shards and zeroed AdamW state into `state`. */
export function initRankState(
  schedule: Schedule,
  run: RankRunConfig,
  kernels: KernelBackend,
): Map<string, DeviceTensor> {
  const state = new Map<string, DeviceTensor>();
  const mesh = meshOfGraph(schedule.graph.meta);
  for (const p of schedule.graph.params) {
    const ids = paramTensorIds(p.name);
    const local = meshSlice(initFullParam(p, run.seed), p, mesh, run.rank);
    const fsdpIndex = meshIndex(mesh, isEpSplit(mesh, p) ? 'efsdp' : 'dp_shard', run.rank);
    const shard = shardOf(local, meshLocalParam(mesh, p), fsdpIndex);
    const t = kernels.create(ids.shard, shard.length, 'f32');
    kernels.upload(t, shard);
    state.set(ids.shard, t);
    for (const id of [ids.m, ids.v]) {
      const z = kernels.create(id, shard.length, 'f32');
      kernels.upload(z, new Float32Array(shard.length));
      state.set(id, z);
    }
  }
  return state;
}

function checkShapes(schedule: Schedule, run: RankRunConfig): void {
  const meta = schedule.graph.meta;
  if (meta.worldSize !== run.worldSize) {
    throw new FsdpSimError('runtime', `schedule was built for ${meta.worldSize} ranks, the run has ${run.worldSize}`);
  }
  const dp = dataParallelRank(meshOfGraph(meta), run.rank).size;
  if (meta.batch * dp !== run.data.globalBatch || meta.seqLen !== run.data.seqLen) {
    throw new FsdpSimError(
      'runtime',
      `schedule batch ${meta.batch}×${meta.seqLen} per data-parallel rank does not match the data: ` +
        `global batch ${run.data.globalBatch} over ${dp} data-parallel ranks, seqLen ${run.data.seqLen}`,
    );
  }
}

/** Feed this step's micro-batch into the TOKENS / TARGETS tensors (created on first use). */
function feedBatch(
  state: Map<string, DeviceTensor>,
  kernels: KernelBackend,
  run: RankRunConfig,
  step: number,
  dp: { index: number; size: number },
): void {
  const b = rankBatch(run.data, step, dp.index, dp.size);
  for (const [id, data] of [
    [TOKENS, b.tokens],
    [TARGETS, b.targets],
  ] as const) {
    let t = state.get(id);
    if (t === undefined) {
      t = kernels.create(id, data.length, 'i32');
      state.set(id, t);
    }
    kernels.upload(t, data);
  }
}

/** Download this rank's parameter shards, in param-table order. */
async function downloadShards(
  schedule: Schedule,
  state: ReadonlyMap<string, DeviceTensor>,
  kernels: KernelBackend,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const p of schedule.graph.params) {
    const t = state.get(paramTensorIds(p.name).shard);
    if (t === undefined) throw new FsdpSimError('runtime', `rank state lost the shard of '${p.name}'`);
    const host = new Float32Array(t.length);
    await kernels.download(t, host);
    out.push(host);
  }
  return out;
}

/**
 * Run `run.steps` training steps. `onStep` gets every step's local loss; `shouldStop` is polled
 * between steps. Returns the final parameter shards (param-table order).
 */
async function runRank(
  schedule: Schedule,
  run: RankRunConfig,
  kernels: KernelBackend,
  comms: GroupComms,
  onStep: (r: RankStepReport) => void,
): Promise<Float32Array[]> {
  checkShapes(schedule, run);
  const state = initRankState(schedule, run, kernels);
  const mesh = meshOfGraph(schedule.graph.meta);
  const dp = dataParallelRank(mesh, run.rank);
  const tpIndex = meshIndex(mesh, 'tp', run.rank);
  const setOnWait = (fn: ((startMs: number, endMs: number) => void) | undefined) => {
    for (const c of comms.values()) c.onWait = fn;
  };
  let clock = new PhaseClock();
  const timed = timedKernels(kernels, () => clock);
  for (let step = 1; step <= run.steps; step++) {
    if (run.injectFault?.rank === run.rank && run.injectFault.step === step) {
      throw new FsdpSimError('injected_fault', `rank ${run.rank}: injected fault at step ${step}`);
    }
    clock = new PhaseClock(run.measure);
    const stepClock = clock;
    setOnWait((startMs, endMs) => stepClock.add('barrier', endMs - startMs, 'barrier', endMs));
    feedBatch(state, timed, run, step, dp);
    const res = await executeStep(schedule, {
      kernels: timed,
      comms,
      tpIndex,
      state,
      step,
      lr: run.lr,
      measure: run.measure,
      clock,
    });
    if (!Number.isFinite(res.loss)) {
      throw new FsdpSimError('runtime', `rank ${run.rank}: loss is ${res.loss} at step ${step} (diverged; lower lr)`);
    }
    const phases = clock.result();
    onStep({
      step,
      loss: res.loss,
      phases,
      ...(res.nodeUs ? { nodeUs: Object.fromEntries(res.nodeUs) } : {}),
      ...(clock.intervals ? { intervals: clock.intervals } : {}),
    });
  }
  setOnWait(undefined);
  const shards = await downloadShards(schedule, state, kernels);
  for (const t of state.values()) kernels.release(t);
  return shards;
}

/** Every compute op the schedule runs, once per op and attrs: what the kernels compile before step 1. */
export function kernelUses(schedule: Schedule): KernelUse[] {
  const seen = new Map<string, KernelUse>();
  for (const n of schedule.graph.nodes) {
    if (n.kind !== 'compute') continue;
    if (isMoeOp(n.op)) {
      // sized by the routing at run time; their pipelines take no shape, so the op names them
      for (const op of moeKernelsOf(n)) seen.set(op, { op });
      continue;
    }
    const key = `${n.op}:${JSON.stringify(n.attrs ?? {})}`;
    if (!seen.has(key)) seen.set(key, { op: n.op, ...(n.attrs ? { attrs: n.attrs } : {}) });
  }
  return [...seen.values()];
}

/** What a worker shell provides: how to post to the coordinator and how to get kernels. */
export interface RankHost {
  post(m: RankMessage, transfer?: ArrayBuffer[]): void;
  /** The kernel backend for `choice` ('auto': WebGPU when an adapter exists, else CPU). */
  kernels(choice: KernelChoice): Promise<KernelBackend>;
}

/**
 * The message handler both worker shells install: init → kernels → 'ready'; start → steps → 'done'.
 * On any error the rank posts it first, then aborts the communicator so no other rank hangs.
 */
export function createRankServer(host: RankHost): (msg: RankInitMessage | RankStartMessage) => void {
  let init: RankInitMessage | undefined;
  let comms: Map<string, RankComm> | undefined;
  let kernels: KernelBackend | undefined;
  let rank = -1;
  const fail = (e: unknown) => {
    const m = errorMessage(rank, e);
    host.post(m);
    // every group this rank is in: each member aborts its own groups in turn, so the whole mesh stops
    for (const c of comms?.values() ?? []) c.abort(`rank ${rank}: ${m.type === 'error' ? m.message : String(e)}`);
  };
  const setup = async (msg: RankInitMessage) => {
    init = msg;
    rank = msg.run.rank;
    host.post({ type: 'startup', rank, event: { stage: 'started' } });
    comms = new Map(msg.comms.map((g) => [g.group, new RankComm(g.init, g.localRank)]));
    const k = await host.kernels(msg.kernels);
    kernels = k;
    const resolved = { kind: k.kind, device: k.label, ...(k.noWebGpu !== undefined ? { noWebGpu: k.noWebGpu } : {}) };
    const compiling = (compiled: number, total: number) =>
      host.post({
        type: 'startup',
        rank,
        event: { stage: 'compiling', compiled, kernels: total },
        ...(compiled === 0 ? { kernels: resolved } : {}),
      });
    // before 'ready': the schedule's pipelines compile while the other workers start
    if (k.warm) await k.warm(kernelUses(msg.schedule), compiling);
    else compiling(0, 0);
    host.post({ type: 'ready', rank, device: k.label });
  };
  const start = async () => {
    if (init === undefined || comms === undefined || kernels === undefined) {
      throw new FsdpSimError('runtime', `rank ${rank}: 'start' arrived before 'init' finished`);
    }
    const shards = await runRank(init.schedule, init.run, kernels, comms, (r) =>
      host.post({ type: 'step', rank, ...r }),
    );
    // Destroy before 'done': the coordinator terminates workers on 'done', and terminating one
    // inside a native GPU call (Dawn in Node) aborts the whole process.
    kernels.destroy();
    host.post(
      { type: 'done', rank, shards },
      shards.map((s) => s.buffer as ArrayBuffer),
    );
  };
  return (msg) => {
    const job = msg.type === 'init' ? setup(msg) : start();
    job.catch(fail);
  };
}
