// Store value types shared by the slices and the UI: one side of the comparison (A or B), the
// live-run state and user-visible notices.

import type { Agreement, Schedule } from '../backends';
import type { RankStartup, ResolvedKernels } from '../runtime';
import type { CollectiveMismatch } from '../sim';
import type { MemoryCurve, TraceEvent, TraceMetrics } from '../trace';

export type Side = 'a' | 'b';
export const SIDES: readonly Side[] = ['a', 'b'];

type SideSource = 'sim' | 'live' | 'import';

/** A live side's clock when it draws the wall-clock timeline the workers measured: the only "measured" clock. */
export const LIVE_MEASURED_CLOCK = 'live: measured timing';
/** A live side's clock otherwise: the schedule replayed on the cost model (preset, or measured kernel times). */
export const LIVE_MODEL_CLOCK = 'live: preset timing';

/** What one timeline shows: events plus everything measured about them. */
export interface SideResult {
  readonly title: string; // 'aot_eager', 'kineto import (2 files)'
  readonly backend: string;
  readonly source: SideSource;
  /** How the timeline was timed: 'cost model (h100)', 'live: preset timing', 'imported trace'. */
  readonly clock: string;
  readonly events: readonly TraceEvent[];
  readonly memory: readonly MemoryCurve[];
  readonly metrics: TraceMetrics;
  readonly worldSize: number;
  readonly symmetric: boolean;
  readonly schedule?: Schedule;
  /** The CUDA caching allocator's peaks, as torch reports them (simulated sides; src/sim/allocator.ts). */
  readonly allocator?: { readonly peakAllocatedBytes: number; readonly peakReservedBytes: number };
  readonly mismatch?: CollectiveMismatch;
  /** What an import read but did not analyse, or guessed (a rank): shown with the import's notice. */
  readonly warnings?: readonly string[];
  /** The FX graph dump(s) this side ran, by file name, when it came from an FX import (not the config's model). */
  readonly fxGraph?: string;
  /** An FX import with torch's log of the pass: how far this side's decisions agree, per FX graph. */
  readonly torchAgreement?: readonly Agreement[];
  /** What ran (model, mesh, kernels): only sides with equal keys and one clock are compared. */
  readonly run?: RunKey;
  /** A live run stopped before its last step: the step it got to (its timeline is not a finished run). */
  readonly stoppedAfter?: number;
}

/** The identity of a run for comparison: 'llama3-8b', 'FSDP 8', 'cost model' or the live kernels. */
export interface RunKey {
  readonly model: string;
  readonly mesh: string;
  readonly kernels: string;
}

export interface Selection {
  readonly side: Side;
  readonly eventIndex: number;
  /** The same collective on the other timeline, highlighted there too (a diff-table row click). */
  readonly peer?: { readonly side: Side; readonly eventIndex: number };
}

interface LivePoint {
  readonly step: number;
  readonly loss: number;
}

export interface LiveState {
  readonly running: boolean;
  readonly step: number;
  readonly steps: number;
  readonly stepsPerSec: number;
  readonly losses: readonly LivePoint[];
  readonly device: string;
  readonly error: string | null;
  readonly side: Side; // which timeline the live events replace
  readonly ranks: number; // workers used: the config's ranks, at most MAX_LIVE_RANKS
  readonly mesh: string; // the mesh they train on ('FSDP 2 × TP 2'): the config's, scaled to the workers
  readonly stoppedAfter: number | null; // Stop pressed: the last step finished (0: none), else null
  /** Each rank's start-up (runtime/startup.ts) from the spawn until it finished step 1; empty before a run. */
  readonly startup: readonly RankStartup[];
  /** ms from the spawn to the latest start-up report. */
  readonly startupMs: number;
  /** What the ranks' kernels resolved to (the choice, what ran, the adapter, why no WebGPU), once known. */
  readonly kernels: ResolvedKernels | null;
}

export interface Notice {
  readonly kind: 'error' | 'info';
  readonly text: string;
}
