// Test harness for the SAB collectives: one pool of Node worker_threads (one per rank, reused by
// every scenario of a test file), scripted steps per rank, and f32 references computed here
// independently of src (rank-order and ring-order sums, done with Float32Array stores only).

import { createCommInit, type CollectiveAlgorithm } from '../../../src/runtime/comm';
import type { CommGroup } from '../../../src/runtime/comm/comm_types';
import { NodeRankPool, type RankOutcome, type RankStep } from '../../../src/runtime/comm/node';

const POOL_RANKS = 8;
let shared: Promise<NodeRankPool> | undefined;

/** The file's pool of POOL_RANKS workers; scenarios with fewer ranks use the first ones. */
export function pool(): Promise<NodeRankPool> {
  shared ??= NodeRankPool.create(POOL_RANKS);
  return shared;
}

export async function closePool(): Promise<void> {
  if (shared) await (await shared).close();
  shared = undefined;
}

export interface Scenario {
  readonly worldSize: number;
  readonly maxElemsPerRank: number;
  readonly algorithm?: CollectiveAlgorithm;
  readonly timeoutMs?: number;
  /** A mesh sub-group: messages name its global ranks. */
  readonly group?: CommGroup;
  /** steps[r] for rank r; a missing entry means rank r never calls anything. */
  readonly steps: readonly (readonly RankStep[])[];
}

export async function runScenario(s: Scenario): Promise<RankOutcome[]> {
  const init = createCommInit(s.worldSize, s.maxElemsPerRank, {
    algorithm: s.algorithm ?? 'direct',
    timeoutMs: s.timeoutMs ?? 5_000,
    ...(s.group ? { group: s.group } : {}),
  });
  return (await pool()).run(init, s.steps);
}

/** Seeded xorshift32 values in [-scale, scale), rounded to f32. */
export function seededF32(n: number, seed: number, scale = 1): Float32Array {
  let x = (seed * 2654435761) >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = ((x / 0x1_0000_0000) * 2 - 1) * scale;
  }
  return out;
}

/** Chunk r of rank q's input, summed over q in `order`, one f32 rounding per addition (Float32Array store). */
export function reduceChunkRef(
  inputs: readonly Float32Array[],
  r: number,
  order: readonly number[],
  avg: boolean,
): Float32Array {
  const n = inputs.length;
  const c = inputs[0].length / n;
  const acc = new Float32Array(c);
  order.forEach((q, i) => {
    for (let j = 0; j < c; j++) acc[j] = i === 0 ? inputs[q][r * c + j] : acc[j] + inputs[q][r * c + j];
  });
  if (avg) for (let j = 0; j < c; j++) acc[j] = acc[j] / n;
  return acc;
}

export const rankOrder = (n: number): number[] => Array.from({ length: n }, (_, q) => q);
/** Ring order for chunk r: starts at rank r+1 and ends at r (NCCL ring reduce-scatter). */
export const ringOrder = (n: number, r: number): number[] => Array.from({ length: n }, (_, i) => (r + 1 + i) % n);

/** The output of step `i` on every rank; fails loudly with the rank's error. */
export function outputs(outcomes: readonly RankOutcome[], i: number): Float32Array[] {
  return outcomes.map((o) => {
    if (o.error) throw new Error(`rank ${o.rank} failed: ${o.error.message}`);
    const out = o.results[i]?.output;
    if (!out) throw new Error(`rank ${o.rank} has no output for step ${i}`);
    return out;
  });
}

export const bitsOf = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length);
