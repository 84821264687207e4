// Start-up progress of a live run, per rank, from the click to the first step: the coordinator
// spawns the worker, the worker starts (its init arrived), acquires its kernels (which, and why:
// 'auto' names the adapter or why there is none), compiles them (k of n pipelines), is ready, and
// finishes step 1. Pure bookkeeping: the coordinator feeds it the ranks' messages, the live slice
// shows the result.

import type { KernelChoice } from './live_options';

/** How far one rank got, in order. */
export type RankStage = 'spawned' | 'started' | 'compiling' | 'ready' | 'stepped';
export const RANK_STAGES: readonly RankStage[] = ['spawned', 'started', 'compiling', 'ready', 'stepped'];

export interface RankStartup {
  readonly stage: RankStage;
  /** Pipelines compiled so far and in all (0 of 0 for kernels that compile nothing). */
  readonly compiled: number;
  readonly kernels: number;
  /** ms from the run's start to each stage reached so far. */
  readonly at: Readonly<Partial<Record<RankStage, number>>>;
}

/** What the ranks' kernels resolved to: the choice, what runs, on which adapter, and why. */
export interface ResolvedKernels {
  readonly choice: KernelChoice;
  readonly kind: 'webgpu' | 'cpu';
  /** The backend's label: 'webgpu: google swiftshader (fallback, core)', 'cpu reference'. */
  readonly device: string;
  /** Set when 'auto' (or a failed WebGPU device) fell back to CPU: why there was no WebGPU. */
  readonly noWebGpu?: string;
}

/** A rank's start-up report (worker → coordinator), as the bookkeeping takes it. */
export type StartupEvent =
  | { readonly stage: 'started' | 'ready' | 'stepped' }
  | { readonly stage: 'compiling'; readonly compiled: number; readonly kernels: number };

export interface StartupProgress {
  readonly ranks: readonly RankStartup[];
  /** Known once the first rank has its kernels. */
  readonly kernels?: ResolvedKernels;
  /** ms since the run started. */
  readonly elapsedMs: number;
}

export function initialStartup(n: number): RankStartup[] {
  return Array.from({ length: n }, () => ({ stage: 'spawned', compiled: 0, kernels: 0, at: { spawned: 0 } }));
}

const order = (s: RankStage) => RANK_STAGES.indexOf(s);

/** Rank `rank` after `e` at `ms`: stages only move forward; compile counts only grow. */
export function advanceStartup(
  ranks: readonly RankStartup[],
  rank: number,
  e: StartupEvent,
  ms: number,
): RankStartup[] {
  const r = ranks[rank];
  if (r === undefined) return [...ranks];
  const stage = order(e.stage) > order(r.stage) ? e.stage : r.stage;
  const at = r.at[e.stage] === undefined ? { ...r.at, [e.stage]: ms } : r.at;
  const next: RankStartup =
    e.stage === 'compiling'
      ? { stage, at, kernels: e.kernels, compiled: Math.max(r.compiled, e.compiled) }
      : e.stage === 'ready' || e.stage === 'stepped'
        ? { stage, at, kernels: r.kernels, compiled: r.kernels }
        : { ...r, stage, at };
  const out = [...ranks];
  out[rank] = next;
  return out;
}

/** Counts over the ranks: how many reached each stage, and pipelines compiled of all. */
export function startupCounts(ranks: readonly RankStartup[]): Record<RankStage, number> & {
  compiled: number;
  kernels: number;
} {
  const reached = (s: RankStage) => ranks.filter((r) => order(r.stage) >= order(s)).length;
  return {
    spawned: ranks.length,
    started: reached('started'),
    compiling: reached('compiling'),
    ready: reached('ready'),
    stepped: reached('stepped'),
    compiled: ranks.reduce((a, r) => a + r.compiled, 0),
    kernels: ranks.reduce((a, r) => a + r.kernels, 0),
  };
}
