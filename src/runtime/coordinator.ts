// The live-mode coordinator: plans the run once (graph → schedule, comm size, virtual clock),
// spawns one rank worker per rank, streams progress (mean loss, steps/s, the step's events, where
// each rank's step went: phases, and in measured mode the wall-clock timeline) and gathers the
// final parameters. `runTrainingWith` is environment-free and takes a spawner;
// `runTraining` is the browser flavour (Web Workers); coordinator_node.ts is the Node flavour.
// A rank that fails aborts the communicator; the run rejects with its error, naming the rank,
// and every other worker is terminated.

import { FsdpSimError } from '../errors';
import type { TraceEvent } from '../trace';
import { fnv1aHex, unshard } from './init';
import { fixedSpinUs } from './comm/sync';
import { createMeshComms } from './mesh_comms';
import { localParam, meshIndex, meshOfGraph, tpAssemble } from './mesh_ranks';
import type { PhaseInterval, StepPhases } from './exec';
import type { GroupCommInit, RankInitMessage, RankMessage, RankStartMessage } from './rank';
import {
  DEFAULT_COMM_TIMEOUT_MS, measuredEvents, planTraining, presetEvents,
  type TrainingOptions, type TrainingPlan, type TrainingResult,
} from './training_plan';
import { wallEvents } from './wall_events';

export * from './training_plan';

/** One spawned rank, whatever the environment (Web Worker or worker_threads). */
export interface RankPort {
  post(msg: RankInitMessage | RankStartMessage): void;
  /** Messages from the rank; `fail` for an uncaught error or an unexpected exit. */
  listen(onMessage: (m: RankMessage) => void, fail: (e: Error) => void): void;
  terminate(): void;
}
export type SpawnRank = (rank: number) => RankPort;

/** A rank's failure, re-thrown on the coordinator with the rank in `rank` and in the message. */
export class RankError extends FsdpSimError {
  constructor(readonly rank: number, code: string, message: string) {
    super(code, message);
  }
}

/** How long to wait for the root cause once a rank reports only "aborted by rank k". */
const ROOT_CAUSE_GRACE_MS = 500;

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const e = new Error('training stopped (AbortSignal)');
  e.name = 'AbortError';
  return e;
}

/** FNV-1a over every full parameter: each TP slice unsharded from its dp_shard group (replica 0), slices joined. */
function hashParams(plan: TrainingPlan, shardsByRank: readonly (readonly Float32Array[])[]): string {
  const graph = plan.schedule.graph;
  const mesh = meshOfGraph(graph.meta);
  const replica0 = shardsByRank.map((_, r) => r).filter((r) => meshIndex(mesh, 'dp_replicate', r) === 0);
  const fulls = graph.params.map((p, i) => {
    const slices = Array.from({ length: mesh.tp }, (_, t) => {
      const members = replica0.filter((r) => meshIndex(mesh, 'tp', r) === t); // dp_shard order: rank order
      return unshard(members.map((r) => shardsByRank[r][i]), localParam(p));
    });
    return tpAssemble(slices, p);
  });
  return fnv1aHex(fulls);
}

/**
 * Run live training with ranks from `spawn`. `cores`: the cores the rank threads have to themselves
 * (it sets how long a waiting rank spins: comm/sync.ts fixedSpinUs); undefined: adaptive spins.
 */
export function runTrainingWith(
  spawn: SpawnRank, opts: TrainingOptions, cores?: number,
): Promise<TrainingResult> {
  let plan: TrainingPlan;
  let comms: GroupCommInit[][];
  let events: TraceEvent[];
  const n = opts.ranks;
  const measure = opts.timing === 'measured';
  try {
    plan = planTraining(opts);
    const spinUs = fixedSpinUs(n, cores);
    comms = createMeshComms(plan.schedule.graph, {
      timeoutMs: opts.commTimeoutMs ?? DEFAULT_COMM_TIMEOUT_MS, algorithm: opts.collective,
      ...(spinUs !== undefined ? { spinUs } : {}),
    });
    events = measure ? [] : presetEvents(plan, n);
  } catch (e) {
    return Promise.reject(e); // bad options reject like every other failure
  }

  return new Promise<TrainingResult>((resolve, reject) => {
    if (opts.signal?.aborted) return reject(abortError(opts.signal));
    const ports: RankPort[] = [];
    const devices: string[] = new Array(n);
    let ready = 0;
    const deviceLabel = () => [...new Set(devices)].join(' / ');
    const reports = new Map<number, StepReports>();
    const losses: number[] = [];
    const phases: StepPhases[][] = [];
    let lastWall: TraceEvent[] | undefined;
    const shards: Float32Array[][] = new Array(n);
    let done = 0;
    let settled = false;
    let startedAt = 0;
    let pendingAbortErr: RankError | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;

    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      for (const p of ports) p.terminate();
      fn();
    };
    const fail = (e: Error) => finish(() => reject(e));
    const onAbort = () => fail(abortError(opts.signal as AbortSignal));
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const rankFailed = (rank: number, name: string, code: string | undefined, message: string) => {
      const e = new RankError(rank, code ?? 'rank_failed', `rank ${rank} failed: ${name}: ${message}`);
      if (code !== 'collective_aborted') return fail(e);
      // Only a consequence of another rank's abort: give the root cause a moment to arrive.
      pendingAbortErr ??= e;
      graceTimer ??= setTimeout(() => fail(pendingAbortErr as RankError), ROOT_CAUSE_GRACE_MS);
    };

    const onStep = (m: Extract<RankMessage, { type: 'step' }>) => {
      const s = m.step;
      let r = reports.get(s);
      if (r === undefined) reports.set(s, (r = newStepReports(n)));
      r.losses[m.rank] = m.loss;
      r.phases[m.rank] = m.phases;
      r.intervals[m.rank] = m.intervals;
      if (m.nodeUs) r.nodeUs.push(m.nodeUs);
      if (++r.count < n) return;
      reports.delete(s);
      const loss = r.losses.reduce((a, b) => a + b, 0) / n; // rank order: arrival order must not change the bits
      losses[s - 1] = loss;
      phases[s - 1] = r.phases;
      if (measure) {
        events = measuredEvents(plan, n, opts, r.nodeUs);
        lastWall = wallEvents(plan.schedule.graph, r.intervals);
      }
      const elapsedS = (performanceNow() - startedAt) / 1000;
      try {
        opts.onProgress?.({
          step: s, loss, stepsPerSec: elapsedS > 0 ? s / elapsedS : 0, events, device: deviceLabel(), phases: r.phases,
          ...(lastWall ? { wallEvents: lastWall } : {}),
        });
      } catch (e) {
        fail(e instanceof Error ? e : new Error(String(e))); // a throwing callback stops the run, not the process
      }
    };

    const onMessage = (rank: number, m: RankMessage) => {
      if (settled) return;
      switch (m.type) {
        case 'ready':
          devices[rank] = m.device;
          if (++ready === n) {
            startedAt = performanceNow();
            for (const p of ports) p.post({ type: 'start' });
          }
          return;
        case 'step':
          return onStep(m);
        case 'done':
          shards[rank] = [...m.shards];
          if (++done < n) return;
          return finish(() => {
            const elapsedS = (performanceNow() - startedAt) / 1000;
            resolve({
              device: deviceLabel(),
              losses,
              finalParamsHash: hashParams(plan, shards),
              stepsPerSec: elapsedS > 0 ? opts.steps / elapsedS : 0,
              events,
              phases,
              ...(lastWall ? { wallEvents: lastWall } : {}),
            });
          });
        case 'error':
          return rankFailed(rank, m.name, m.code, m.message);
      }
    };

    try {
      for (let rank = 0; rank < n; rank++) {
        const port = spawn(rank);
        ports.push(port);
        port.listen((m) => onMessage(rank, m), (e) => rankFailed(rank, e.name, undefined, e.message));
        port.post({
          type: 'init',
          comms: comms[rank],
          schedule: plan.schedule,
          kernels: opts.kernels,
          run: {
            rank, worldSize: n, steps: opts.steps, seed: opts.seed, data: plan.data, lr: plan.lr, measure,
            ...(opts.injectFault ? { injectFault: opts.injectFault } : {}),
          },
        });
      }
    } catch (e) {
      fail(e instanceof Error ? e : new Error(String(e)));
    }
  });
}

/** What the coordinator collects for one step until every rank has reported it. */
interface StepReports {
  readonly losses: number[];
  readonly phases: StepPhases[];
  readonly intervals: (readonly PhaseInterval[] | undefined)[];
  readonly nodeUs: Record<string, number>[];
  count: number;
}

function newStepReports(n: number): StepReports {
  return {
    losses: new Array<number>(n).fill(0),
    phases: new Array<StepPhases>(n),
    intervals: new Array(n),
    nodeUs: [],
    count: 0,
  };
}

function performanceNow(): number {
  return globalThis.performance.now();
}

/** Browser flavour: one module Web Worker per rank (the page must be cross-origin isolated). */
export function runTraining(opts: TrainingOptions): Promise<TrainingResult> {
  return runTrainingWith(spawnBrowserRank, opts, rankCoresInBrowser());
}

/**
 * The cores a browser leaves the rank workers: one fewer than it reports, for the page, the GPU
 * process and the browser's own threads (on 2 cores two spinning workers made a 1 MB all-gather
 * 1–2 ms instead of 0.2).
 */
export function rankCoresInBrowser(): number {
  return Math.max(1, (globalThis.navigator?.hardwareConcurrency ?? 1) - 1);
}

function spawnBrowserRank(rank: number): RankPort {
  const w = new Worker(new URL('./rank.worker.ts', import.meta.url), { type: 'module', name: `rank ${rank}` });
  return {
    post: (msg) => w.postMessage(msg),
    listen(onMessage, fail) {
      w.onmessage = (ev: MessageEvent<RankMessage>) => onMessage(ev.data);
      w.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        fail(new Error(ev.message || 'worker script error'));
      };
      w.onmessageerror = () => fail(new Error('message from the rank worker could not be deserialized'));
    },
    terminate: () => w.terminate(),
  };
}
