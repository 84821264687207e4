// Bench rank Worker: one RankComm over the page's SharedArrayBuffers, then `iters` timed
// collectives (after `warmup` untimed ones) of `elemsPerRank` f32 per shard — the same loop as the
// Node bench (src/runtime/comm/node_rank.worker.ts 'bench' step), so the two are comparable.
import { RankComm, type CommInit } from '../../src/runtime/comm';

export interface CommWorkerJob {
  readonly init: CommInit;
  readonly rank: number;
  readonly kind: 'all_gather' | 'reduce_scatter';
  readonly elemsPerRank: number;
  readonly iters: number;
  readonly warmup: number;
}

self.onmessage = (ev: MessageEvent<CommWorkerJob>) => {
  const j = ev.data;
  try {
    const comm = new RankComm(j.init, j.rank);
    const n = comm.worldSize;
    const full = new Float32Array(n * j.elemsPerRank).fill(j.rank + 1);
    const part = new Float32Array(j.elemsPerRank).fill(j.rank + 1);
    const req = { label: `bench ${j.kind}`, tensors: ['bench'] };
    const once = (): void => {
      if (j.kind === 'all_gather') comm.allGather(req, part, full);
      else comm.reduceScatter(req, full, part, 'sum');
    };
    for (let i = 0; i < j.warmup; i++) once();
    const timesMs: number[] = [];
    for (let i = 0; i < j.iters; i++) {
      const t0 = performance.now();
      once();
      timesMs.push(performance.now() - t0);
    }
    // Spot-check the result: all-gather slot q holds q+1; reduce-scatter sums 1..n.
    const want = j.kind === 'all_gather' ? null : (n * (n + 1)) / 2;
    const ok =
      want === null
        ? full.every((x, i) => x === Math.floor(i / j.elemsPerRank) + 1)
        : part[0] === want && part[part.length - 1] === want;
    (self as unknown as Worker).postMessage({ rank: j.rank, timesMs, ok });
  } catch (e) {
    (self as unknown as Worker).postMessage({ rank: j.rank, error: e instanceof Error ? e.message : String(e) });
  }
};
