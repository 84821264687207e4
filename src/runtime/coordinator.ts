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
import { fixedSpinUs } from './comm';
import { createMeshComms } from './mesh_comms';
import { isEpSplit, meshIndex, meshLocalParam, meshOfGraph, tpAssemble } from './mesh_ranks';
import { meshGroup } from '../graph';
import type { PhaseInterval, StepPhases } from './exec';
import type { GroupCommInit, RankInitMessage, RankMessage, RankStartMessage } from './rank';
import {
  DEFAULT_COMM_TIMEOUT_MS,
  measuredEvents,
  planTraining,
  presetEvents,
  type TrainingOptions,
  type TrainingPlan,
  type TrainingResult,
} from './training_plan';
import { advanceStartup, initialStartup, type ResolvedKernels, type RankStartup, type StartupEvent } from './startup';
import { wallEvents } from './wall_events';

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
  constructor(
    readonly rank: number,
    code: string,
    message: string,
  ) {
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

/** Slices of dim 0 joined in order. */
function concatSlices(slices: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(slices.reduce((n, s) => n + s.length, 0));
  let at = 0;
  for (const s of slices) {
    out.set(s, at);
    at += s.length;
  }
  return out;
}

/** FNV-1a over every full parameter: each TP slice unsharded from its dp_shard group (replica 0), slices joined. */
function hashParams(plan: TrainingPlan, shardsByRank: readonly (readonly Float32Array[])[]): string {
  const graph = plan.schedule.graph;
  const mesh = meshOfGraph(graph.meta);
  const replica0 = shardsByRank.map((_, r) => r).filter((r) => meshIndex(mesh, 'dp_replicate', r) === 0);
  const fulls = graph.params.map((p, i) => {
    // a routed expert: its E / ep experts sharded over efsdp, whose members are the ranks of one ep index
    const dim = isEpSplit(mesh, p) ? 'ep' : 'tp';
    const slices = Array.from({ length: meshGroup(mesh, dim).size }, (_, t) => {
      const members = replica0.filter((r) => meshIndex(mesh, dim, r) === t); // FSDP order: rank order
      return unshard(
        members.map((r) => shardsByRank[r][i]),
        meshLocalParam(mesh, p),
      );
    });
    return dim === 'ep' ? concatSlices(slices) : tpAssemble(slices, p);
  });
  return fnv1aHex(fulls);
}

/** What a run needs before any rank starts; bad options throw here. */
interface PreparedRun {
  readonly plan: TrainingPlan;
  readonly comms: GroupCommInit[][];
  /** The step's events on the preset clock; empty until the first step in measured timing. */
  readonly events: TraceEvent[];
}

function prepareRun(opts: TrainingOptions, cores: number | undefined): PreparedRun {
  const plan = planTraining(opts);
  const spinUs = fixedSpinUs(opts.ranks, cores);
  const comms = createMeshComms(plan.schedule.graph, {
    timeoutMs: opts.commTimeoutMs ?? DEFAULT_COMM_TIMEOUT_MS,
    algorithm: opts.collective,
    ...(spinUs !== undefined ? { spinUs } : {}),
  });
  const events = opts.timing === 'measured' ? [] : presetEvents(plan, opts.ranks);
  return { plan, comms, events };
}

/**
 * Run live training with ranks from `spawn`. `cores`: the cores the rank threads have to themselves
 * (it sets how long a waiting rank spins: comm/sync.ts fixedSpinUs); undefined: adaptive spins.
 */
export function runTrainingWith(spawn: SpawnRank, opts: TrainingOptions, cores?: number): Promise<TrainingResult> {
  let prepared: PreparedRun;
  try {
    prepared = prepareRun(opts, cores);
  } catch (e) {
    return Promise.reject(e); // bad options reject like every other failure
  }
  return new Promise<TrainingResult>((resolve, reject) => {
    if (opts.signal?.aborted) return reject(abortError(opts.signal));
    new TrainingRun(opts, prepared, resolve, reject).spawnRanks(spawn);
  });
}

/** One run in flight: its rank ports, what the ranks reported so far, and how the run settles (once). */
class TrainingRun {
  private readonly opts: TrainingOptions;
  private readonly plan: TrainingPlan;
  private readonly comms: GroupCommInit[][];
  private readonly resolve: (r: TrainingResult) => void;
  private readonly reject: (e: Error) => void;
  private readonly n: number;
  private readonly measure: boolean;
  private readonly ports: RankPort[] = [];
  private readonly devices: string[];
  private readonly reports = new Map<number, StepReports>();
  private readonly losses: number[] = [];
  private readonly phases: StepPhases[][] = [];
  private readonly shards: Float32Array[][];
  private events: TraceEvent[];
  private lastWall: TraceEvent[] | undefined;
  private ready = 0;
  private done = 0;
  private settled = false;
  private startedAt = 0;
  private readonly spawnedAt = performanceNow();
  private startup: RankStartup[];
  private kernels: ResolvedKernels | undefined;
  private pendingAbortErr: RankError | undefined;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => this.fail(abortError(this.opts.signal as AbortSignal));

  constructor(
    opts: TrainingOptions,
    prepared: PreparedRun,
    resolve: (r: TrainingResult) => void,
    reject: (e: Error) => void,
  ) {
    this.opts = opts;
    this.plan = prepared.plan;
    this.comms = prepared.comms;
    this.events = prepared.events;
    this.resolve = resolve;
    this.reject = reject;
    this.n = opts.ranks;
    this.measure = opts.timing === 'measured';
    this.devices = new Array(this.n);
    this.shards = new Array(this.n);
    this.startup = initialStartup(this.n);
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Spawn every rank and send it its init message; a spawn that throws fails the run. */
  spawnRanks(spawn: SpawnRank): void {
    const { opts, plan, n, measure } = this;
    try {
      for (let rank = 0; rank < n; rank++) {
        const port = spawn(rank);
        this.ports.push(port);
        port.listen(
          (m) => this.onMessage(rank, m),
          (e) => this.rankFailed(rank, e.name, undefined, e.message),
        );
        port.post({
          type: 'init',
          comms: this.comms[rank],
          schedule: plan.schedule,
          kernels: opts.kernels,
          run: {
            rank,
            worldSize: n,
            steps: opts.steps,
            seed: opts.seed,
            data: plan.data,
            lr: plan.lr,
            measure,
            ...(opts.injectFault ? { injectFault: opts.injectFault } : {}),
          },
        });
      }
      this.publishStartup(); // every rank spawned: the page shows them before any has started
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private finish(fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    if (this.graceTimer !== undefined) clearTimeout(this.graceTimer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    for (const p of this.ports) p.terminate();
    fn();
  }

  private fail(e: Error): void {
    this.finish(() => this.reject(e));
  }

  private rankFailed(rank: number, name: string, code: string | undefined, message: string): void {
    const e = new RankError(rank, code ?? 'rank_failed', `rank ${rank} failed: ${name}: ${message}`);
    if (code !== 'collective_aborted') return this.fail(e);
    // Only a consequence of another rank's abort: give the root cause a moment to arrive.
    this.pendingAbortErr ??= e;
    this.graceTimer ??= setTimeout(() => this.fail(this.pendingAbortErr as RankError), ROOT_CAUSE_GRACE_MS);
  }

  /** One rank's start-up progress; published until every rank has finished step 1. */
  private onStartup(rank: number, e: StartupEvent, kernels?: Omit<ResolvedKernels, 'choice'>): void {
    if (this.startup[rank]?.stage === 'stepped') return;
    if (kernels !== undefined && this.kernels === undefined) this.kernels = { choice: this.opts.kernels, ...kernels };
    this.startup = advanceStartup(this.startup, rank, e, performanceNow() - this.spawnedAt);
    this.publishStartup();
  }

  private publishStartup(): void {
    const elapsedMs = performanceNow() - this.spawnedAt;
    try {
      this.opts.onStartup?.({
        ranks: this.startup,
        elapsedMs,
        ...(this.kernels !== undefined ? { kernels: this.kernels } : {}),
      });
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private deviceLabel(): string {
    return [...new Set(this.devices)].join(' / ');
  }

  private onMessage(rank: number, m: RankMessage): void {
    if (this.settled) return;
    switch (m.type) {
      case 'startup':
        return this.onStartup(rank, m.event, m.kernels);
      case 'ready':
        this.devices[rank] = m.device;
        this.onStartup(rank, { stage: 'ready' });
        if (++this.ready === this.n) {
          this.startedAt = performanceNow();
          for (const p of this.ports) p.post({ type: 'start' });
        }
        return;
      case 'step':
        return this.onStep(m);
      case 'done':
        this.shards[rank] = [...m.shards];
        if (++this.done < this.n) return;
        return this.finish(() => this.resolve(this.result()));
      case 'error':
        return this.rankFailed(rank, m.name, m.code, m.message);
    }
  }

  /** Collect one rank's report of a step; once every rank has reported it, publish the step. */
  private onStep(m: Extract<RankMessage, { type: 'step' }>): void {
    const { n, plan, opts } = this;
    const s = m.step;
    if (s === 1) this.onStartup(m.rank, { stage: 'stepped' });
    let r = this.reports.get(s);
    if (r === undefined) this.reports.set(s, (r = newStepReports(n)));
    r.losses[m.rank] = m.loss;
    r.phases[m.rank] = m.phases;
    r.intervals[m.rank] = m.intervals;
    if (m.nodeUs) r.nodeUs.push(m.nodeUs);
    if (++r.count < n) return;
    this.reports.delete(s);
    const loss = r.losses.reduce((a, b) => a + b, 0) / n; // rank order: arrival order must not change the bits
    this.losses[s - 1] = loss;
    this.phases[s - 1] = r.phases;
    if (this.measure) {
      this.events = measuredEvents(plan, n, opts, r.nodeUs);
      this.lastWall = wallEvents(plan.schedule.graph, r.intervals);
    }
    const elapsedS = (performanceNow() - this.startedAt) / 1000;
    try {
      opts.onProgress?.({
        step: s,
        loss,
        stepsPerSec: elapsedS > 0 ? s / elapsedS : 0,
        events: this.events,
        device: this.deviceLabel(),
        phases: r.phases,
        ...(this.lastWall ? { wallEvents: this.lastWall } : {}),
      });
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e))); // a throwing callback stops the run, not the process
    }
  }

  /** The run's result once every rank has sent its final shards. */
  private result(): TrainingResult {
    const elapsedS = (performanceNow() - this.startedAt) / 1000;
    return {
      device: this.deviceLabel(),
      losses: this.losses,
      finalParamsHash: hashParams(this.plan, this.shards),
      stepsPerSec: elapsedS > 0 ? this.opts.steps / elapsedS : 0,
      events: this.events,
      phases: this.phases,
      ...(this.lastWall ? { wallEvents: this.lastWall } : {}),
    };
  }
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
