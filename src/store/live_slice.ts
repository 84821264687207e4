// Live slice: a real training run on rank Web Workers (src/runtime coordinator). Streams
// progress (step, loss, steps/s, the step's events) into the store; Stop aborts the run. The run
// takes the config's mesh (TP, HSDP) as far as the live workers and the tiny model can.

import type { StoreApi } from 'zustand/vanilla';
// the browser flavour (Web Workers)
import { type AdapterProbe, probeAdapter, runTraining, type TrainingOptions } from '../runtime';
import type { BackendName } from '../backends';
import { describeMesh, type SimConfig } from '../config';
import { sideFromEvents } from './engine';
import { liveMeshOf, liveRanks, liveRunOptions } from './live_run';
import type { ConfigSlice } from './config_slice';
import type { ResultsSlice } from './results_slice';
import { LIVE_MEASURED_CLOCK, LIVE_MODEL_CLOCK, type LiveState, type RunKey, type Side } from './store_types';
import type { ViewSlice } from './view_slice';

export interface LiveSlice {
  readonly live: LiveState;
  /** The WebGPU adapter this page offers the rank workers (null until probed): what 'auto' kernels will pick. */
  readonly liveAdapter: AdapterProbe | null;
  startLive(opts?: { steps?: number; side?: Side }): Promise<void>;
  stopLive(): void;
  /** Probe the adapter once (runtime/gpu, the way the workers ask); later calls return the first answer. */
  probeLiveAdapter(): Promise<AdapterProbe>;
}

const IDLE_LIVE: LiveState = {
  running: false,
  step: 0,
  steps: 0,
  stepsPerSec: 0,
  losses: [],
  device: '',
  error: null,
  side: 'b',
  ranks: 0,
  mesh: '',
  stoppedAfter: null,
  startup: [],
  startupMs: 0,
  kernels: null,
};

/**
 * The config as the live workers train it: tiny on liveRanks' workers, the mesh scaled to them,
 * the preset's batch, sequence and checkpointing. Run live switches to it (both sides, and the
 * config panel, then show what runs) rather than compare tiny with the model configured.
 */
export function liveTrainableConfig(cfg: SimConfig): SimConfig {
  const ranks = liveRanks(cfg.ranks);
  const mesh = liveMeshOf(cfg.parallelism, ranks);
  const shard = cfg.parallelism.data_parallel_shard_degree === -1 ? -1 : mesh.dpShard;
  const parallelism = {
    ...cfg.parallelism,
    data_parallel_replicate_degree: mesh.dpReplicate,
    data_parallel_shard_degree: shard,
    tensor_parallel_degree: mesh.tp,
  };
  return { ...cfg, model: 'tiny', ranks, localBatch: null, seqLen: null, activationCheckpointing: null, parallelism };
}

/** Switch the store to what live trains (a notice says from what), and wait for A's re-simulation. */
async function switchToTrainable<S extends ConfigSlice & ResultsSlice>(get: () => S): Promise<void> {
  const cfg = get().config;
  const next = liveTrainableConfig(cfg);
  if (JSON.stringify(next) === JSON.stringify(cfg)) return;
  get().setConfig(next);
  get().setNotice({
    kind: 'info',
    text:
      `Run live trains tiny on ${next.ranks} workers: the config is now tiny × ${next.ranks} ` +
      `(was ${cfg.model} × ${cfg.ranks}), both sides.`,
  });
  await get().whenSimulated();
}

type LiveStore = LiveSlice & ResultsSlice & ViewSlice & ConfigSlice;
type TrainingProgress = Parameters<NonNullable<TrainingOptions['onProgress']>>[0];

/** One run as the store follows it: the side it draws on, what it trains, and whether it has drawn yet. */
interface LiveRunState {
  readonly side: Side;
  readonly backend: BackendName;
  readonly ranks: number;
  readonly key: RunKey; // what ran, so only like runs are compared
  drewEvents: boolean;
}

/** The live side, once the run ended: what ran (only like runs are compared) and where it stopped. */
function tagSide<S extends LiveStore>(get: () => S, run: LiveRunState, stoppedAfter?: number): void {
  if (!run.drewEvents) return;
  const r = get().sides[run.side];
  if (r?.source !== 'live') return;
  get().setSide(run.side, { ...r, run: run.key, ...(stoppedAfter === undefined ? {} : { stoppedAfter }) }, true);
}

/** Each step's progress into the store: the loss curve, and the step's events drawn on the run's side. */
function progressInto<S extends LiveStore>(
  get: () => S,
  setLive: (p: Partial<LiveState>) => void,
  cfg: SimConfig,
  run: LiveRunState,
): (p: TrainingProgress) => void {
  return (p) => {
    const losses = [...get().live.losses, { step: p.step, loss: p.loss }];
    setLive({ step: p.step, stepsPerSec: p.stepsPerSec, losses });
    // measured timing draws the step as this machine ran it: its readbacks, uploads and barrier waits too
    const wall = cfg.live.timing === 'measured' && p.wallEvents?.length ? p.wallEvents : undefined;
    const events = wall ?? p.events;
    if (!events?.length) return;
    // "measured" only when the wall clock is drawn; a replay on the cost model is not measured
    const clock = wall ? LIVE_MEASURED_CLOCK : LIVE_MODEL_CLOCK;
    const side = sideFromEvents(events, [], `${run.backend} (live)`, run.backend, 'live', clock, run.ranks);
    get().setSide(run.side, side, run.drewEvents);
    run.drewEvents = true;
  };
}

/** Trains the (already switched) config on its side until it ends, fails or is aborted, keeping `live` current. */
async function trainLive<S extends LiveStore>(
  set: StoreApi<S>['setState'],
  get: () => S,
  signal: AbortSignal,
  opts: { steps?: number; side?: Side },
): Promise<void> {
  const setLive = (p: Partial<LiveState>) => set({ live: { ...get().live, ...p } } as Partial<S>);
  const cfg: SimConfig = get().config;
  const side = opts.side ?? 'b';
  const backend = (side === 'a' ? cfg.backendA : cfg.backendB) as BackendName;
  const steps = opts.steps ?? cfg.live.steps;
  const options = liveRunOptions(cfg, backend, steps);
  const ranks = options.ranks;
  const mesh = describeMesh(liveMeshOf(cfg.parallelism, ranks));
  set({ live: { ...IDLE_LIVE, running: true, steps, side, ranks, mesh } } as Partial<S>);
  const key: RunKey = { model: 'tiny', mesh, kernels: cfg.live.kernels };
  const run: LiveRunState = { side, backend, ranks, key, drewEvents: false };
  try {
    const res = await runTraining({
      ...options,
      signal,
      onStartup: (p) => setLive({ startup: p.ranks, startupMs: p.elapsedMs, kernels: p.kernels ?? null }),
      onProgress: progressInto(get, setLive, cfg, run),
    });
    setLive({ running: false, device: res.device, stepsPerSec: res.stepsPerSec });
    tagSide(get, run);
  } catch (e) {
    const aborted = signal.aborted;
    const step = get().live.step;
    const partial = step < steps ? step : undefined; // Stop after the last step: a finished run
    const error = aborted ? null : `Live run failed: ${(e as Error).message}`;
    setLive({ running: false, error, stoppedAfter: aborted ? (partial ?? null) : null });
    tagSide(get, run, partial);
  }
}

export function createLiveSlice<S extends LiveStore>(set: StoreApi<S>['setState'], get: () => S): LiveSlice {
  let controller: AbortController | null = null;
  let probe: Promise<AdapterProbe> | null = null;
  let starting = false; // between the click and the run: switching the config, re-simulating A
  return {
    live: IDLE_LIVE,
    liveAdapter: null,
    probeLiveAdapter: () => {
      probe ??= probeAdapter()
        .catch((e: unknown) => ({ found: false as const, why: (e as Error).message }))
        .then((a) => {
          set({ liveAdapter: a } as Partial<S>);
          return a;
        });
      return probe;
    },
    startLive: async (opts = {}) => {
      if (get().live.running || starting) return;
      starting = true;
      try {
        await switchToTrainable(get);
      } finally {
        starting = false;
      }
      controller = new AbortController();
      try {
        await trainLive(set, get, controller.signal, opts);
      } finally {
        controller = null;
      }
    },
    stopLive: () => {
      controller?.abort();
      set({ live: { ...get().live, running: false } } as Partial<S>);
    },
  };
}
