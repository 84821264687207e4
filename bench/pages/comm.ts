// Bench page 2: all-gather and reduce-scatter across N browser Workers running RankComm over
// SharedArrayBuffers (the page is cross-origin isolated), against a single-thread
// Float32Array.set copy on this page, in the same run. Per iteration the slowest rank counts.
import { createCommInit } from '../../src/runtime/comm';
import { fixedSpinUs } from '../../src/runtime/comm/sync';
import { rankCoresInBrowser } from '../../src/runtime/coordinator';
import type { CommWorkerJob } from './comm_worker';
import { ready, warmupOf } from './bench_page';
import { midpointMedian } from '../../src/util';

export interface CommPageCase {
  readonly kind: 'all_gather' | 'reduce_scatter';
  readonly worldSize: number;
  readonly totalBytes: number; // gathered size S = n·B (all-gather output, reduce-scatter input)
}

export interface CommPageOptions {
  readonly cases: readonly CommPageCase[];
  readonly itersBig: number; // cases of ≥ 64 MB
  readonly itersSmall: number;
}

export interface CommPageRecord extends CommPageCase {
  readonly shardBytes: number;
  readonly medianMs: number;
  readonly timesMs: readonly number[];
  readonly ok: boolean;
  readonly memcpyMs: number; // single-thread copy of totalBytes, median
}

/** Single-thread Float32Array.set of `bytes`, median of `iters` after one warm-up. */
function memcpyMs(bytes: number, iters: number): number {
  const src = new Float32Array(bytes / 4).fill(1);
  const dst = new Float32Array(bytes / 4);
  dst.set(src);
  const ts: number[] = [];
  for (let i = 0; i < iters; i++) {
    const t0 = performance.now();
    dst.set(src);
    ts.push(performance.now() - t0);
  }
  return midpointMedian(ts);
}

function spawn(n: number): Worker[] {
  return Array.from(
    { length: n },
    (_, r) => new Worker(new URL('./comm_worker.ts', import.meta.url), { type: 'module', name: `bench rank ${r}` }),
  );
}

async function runCase(workers: Worker[], c: CommPageCase, iters: number): Promise<{ times: number[]; ok: boolean }> {
  const n = c.worldSize;
  const elemsPerRank = c.totalBytes / 4 / n;
  const spinUs = fixedSpinUs(n, rankCoresInBrowser());
  const init = createCommInit(n, elemsPerRank, { timeoutMs: 120_000, ...(spinUs !== undefined ? { spinUs } : {}) });
  const answers = await Promise.all(
    workers.slice(0, n).map(
      (w, rank) =>
        new Promise<{ timesMs?: number[]; ok?: boolean; error?: string }>((resolve) => {
          w.onmessage = (ev) => resolve(ev.data);
          w.onerror = (ev) => resolve({ error: ev.message });
          const job: CommWorkerJob = { init, rank, kind: c.kind, elemsPerRank, iters, warmup: warmupOf(c.totalBytes) };
          w.postMessage(job);
        }),
    ),
  );
  const err = answers.find((a) => a.error);
  if (err) throw new Error(`comm bench ${c.kind} n=${n}: ${err.error}`);
  const times = Array.from({ length: iters }, (_, i) => Math.max(...answers.map((a) => a.timesMs![i])));
  return { times, ok: answers.every((a) => a.ok) };
}

async function run(o: CommPageOptions): Promise<CommPageRecord[]> {
  if (!crossOriginIsolated) throw new Error('comm bench page is not cross-origin isolated: no SharedArrayBuffer');
  const out: CommPageRecord[] = [];
  let workers: Worker[] = [];
  for (const c of o.cases) {
    if (workers.length !== c.worldSize) {
      workers.forEach((w) => w.terminate());
      workers = spawn(c.worldSize);
    }
    const iters = c.totalBytes >= 64 * 2 ** 20 ? o.itersBig : o.itersSmall;
    const { times, ok } = await runCase(workers, c, iters);
    // Measured right after the case (not once per size): this box is shared, its load drifts.
    const rec = {
      ...c,
      shardBytes: c.totalBytes / c.worldSize,
      medianMs: midpointMedian(times),
      timesMs: times,
      ok,
      memcpyMs: memcpyMs(c.totalBytes, Math.max(5, iters)),
    };
    console.info(
      `comm ${c.kind} n=${c.worldSize} ${c.totalBytes / 2 ** 20} MB: ${rec.medianMs.toFixed(1)} ms (memcpy ${rec.memcpyMs.toFixed(1)} ms) ok=${ok}`,
    );
    out.push(rec);
  }
  workers.forEach((w) => w.terminate());
  return out;
}

ready({ comm: run as (o: never) => Promise<unknown> });
