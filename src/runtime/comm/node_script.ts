// Scripts the Node rank workers run (tests and bench): a list of steps per rank, and what comes
// back. Plain data so it crosses postMessage; shared by node_rank.worker.ts and node_pool.ts.

import type { CommInit, ReduceOp } from './comm_types';

export type RankStep =
  | {
      readonly op: 'all_gather';
      readonly label: string;
      readonly tensors: readonly string[];
      readonly input: Float32Array;
    }
  | {
      readonly op: 'reduce_scatter';
      readonly label: string;
      readonly tensors: readonly string[];
      readonly input: Float32Array;
      readonly reduce: ReduceOp;
    }
  | {
      readonly op: 'all_reduce';
      readonly label: string;
      readonly tensors: readonly string[];
      readonly input: Float32Array;
      readonly reduce: ReduceOp;
    }
  | {
      readonly op: 'all_to_all';
      readonly label: string;
      readonly tensors: readonly string[];
      readonly input: Float32Array;
      readonly sendSplits: readonly number[];
      readonly recvSplits: readonly number[];
    }
  | { readonly op: 'barrier'; readonly label: string }
  | { readonly op: 'abort'; readonly reason: string }
  | { readonly op: 'sleep'; readonly ms: number } // busy elsewhere (a straggler), not in a collective
  | {
      /** Time `iters` collectives of `elemsPerRank` f32 per shard after `warmup` untimed ones. */
      readonly op: 'bench';
      readonly kind: 'all_gather' | 'reduce_scatter';
      readonly elemsPerRank: number;
      readonly iters: number;
      readonly warmup: number;
    };

export interface ScriptStepResult {
  readonly op: RankStep['op'];
  readonly output?: Float32Array; // all_gather / reduce_scatter / all_reduce / all_to_all
  readonly timesMs?: readonly number[]; // bench: wall time of each timed collective on this rank
}

interface RankError {
  readonly name: string;
  readonly code?: string;
  readonly message: string;
}

export interface RankOutcome {
  readonly rank: number;
  readonly results: readonly ScriptStepResult[]; // steps completed before any error
  readonly error?: RankError;
  readonly elapsedMs: number;
}

export interface RankJob {
  readonly init: CommInit;
  readonly rank: number;
  readonly steps: readonly RankStep[];
}
