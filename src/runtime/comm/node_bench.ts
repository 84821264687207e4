// Timing helpers for the bench (Node worker_threads): a memcpy baseline and one collective of B
// bytes per shard across N workers. Napkin math: all_gather moves (n−1)·B into each rank, so its
// "bus bandwidth" is (n−1)·B / t, the NCCL-tests convention; reduce_scatter the same, plus adds.

import { availableParallelism } from 'node:os';
import { NodeRankPool } from './node_pool';
import { fixedSpinUs } from './sync';
import { createCommInit, type CollectiveAlgorithm } from './comm_types';

interface TimingStats {
  readonly medianMs: number;
  readonly minMs: number;
  readonly timesMs: readonly number[];
}

export interface MemcpyBaseline extends TimingStats {
  readonly bytes: number;
  readonly gbPerS: number; // bytes / median
}

export interface CollectiveBench extends TimingStats {
  readonly kind: 'all_gather' | 'reduce_scatter';
  readonly algorithm: CollectiveAlgorithm;
  readonly worldSize: number;
  readonly shardBytes: number; // per rank (all_gather input, reduce_scatter output)
  readonly busGbPerS: number; // (n−1)·shardBytes / median
}

function stats(timesMs: readonly number[]): TimingStats {
  const s = [...timesMs].sort((a, b) => a - b);
  return { medianMs: s[Math.floor(s.length / 2)] ?? 0, minMs: s[0] ?? 0, timesMs };
}

/** Time `Float32Array.set` of `bytes` (rounded down to whole f32) on this thread. */
export function memcpyBaseline(bytes: number, iters = 20): MemcpyBaseline {
  const elems = Math.max(1, Math.floor(bytes / 4));
  const src = new Float32Array(elems).fill(1);
  const dst = new Float32Array(elems);
  dst.set(src); // warm-up
  const timesMs: number[] = [];
  for (let i = 0; i < iters; i++) {
    const t0 = performance.now();
    dst.set(src);
    timesMs.push(performance.now() - t0);
  }
  const st = stats(timesMs);
  return { ...st, bytes: elems * 4, gbPerS: (elems * 4) / (st.medianMs * 1e6) };
}

export interface CollectiveBenchOptions {
  readonly kind: 'all_gather' | 'reduce_scatter';
  readonly shardBytes: number;
  readonly worldSize: number;
  readonly algorithm?: CollectiveAlgorithm;
  readonly iters?: number;
  readonly warmup?: number;
  readonly timeoutMs?: number;
  /** Reuse workers across calls (the caller closes it); else a pool is spawned and closed here. */
  readonly pool?: NodeRankPool;
}

/** Per iteration the slowest rank's time counts (the collective ends when the last rank leaves). */
export async function benchCollective(o: CollectiveBenchOptions): Promise<CollectiveBench> {
  const elemsPerRank = Math.max(1, Math.floor(o.shardBytes / 4));
  const algorithm = o.algorithm ?? 'direct';
  const iters = o.iters ?? 10;
  const pool = o.pool ?? (await NodeRankPool.create(o.worldSize));
  try {
    const spinUs = fixedSpinUs(o.worldSize, availableParallelism());
    const init = createCommInit(o.worldSize, elemsPerRank, {
      algorithm,
      timeoutMs: o.timeoutMs ?? 30_000,
      ...(spinUs !== undefined ? { spinUs } : {}),
    });
    const step = { op: 'bench', kind: o.kind, elemsPerRank, iters, warmup: o.warmup ?? 2 } as const;
    const outcomes = await pool.run(
      init,
      Array.from({ length: o.worldSize }, () => [step]),
    );
    const failed = outcomes.find((x) => x.error);
    if (failed?.error) throw new Error(`bench rank ${failed.rank}: ${failed.error.message}`);
    const perIter = Array.from({ length: iters }, (_, i) =>
      Math.max(...outcomes.map((x) => x.results[0].timesMs?.[i] ?? 0)),
    );
    const st = stats(perIter);
    const shardBytes = elemsPerRank * 4;
    return {
      ...st,
      kind: o.kind,
      algorithm,
      worldSize: o.worldSize,
      shardBytes,
      busGbPerS: ((o.worldSize - 1) * shardBytes) / (st.medianMs * 1e6),
    };
  } finally {
    if (!o.pool) await pool.close();
  }
}
