// Bench 2: SharedArrayBuffer all-gather / reduce-scatter (direct algorithm) on 2/4/8 ranks, in Node
// worker_threads (src/runtime/comm/node: benchCollective) and in browser Workers (bench/pages/comm.ts),
// against a single-thread Float32Array.set copy measured in the same run and environment.
//
// Sizes are the gathered size S = n·B (all-gather output per rank = reduce-scatter input per rank):
// 1, 16, 64, 256 MB. The data SAB is n·S bytes and every rank holds an S-byte buffer, so a case
// needs ≈ 2·n·S bytes; cases with n·S above MAX_SAB_BYTES (512 MiB; 2 GiB with --full) are skipped
// (by default: 256 MB on 4 and 8 ranks) to keep the shared 2-core box out of swap.
//
// "Bytes moved" convention: every byte some rank copies, counted once, as memcpy counts its bytes:
//   all_gather:     each rank copies its shard in (B) and the n shards out (n·B): n·(n+1)·B = (n+1)·S
//   reduce_scatter: each rank copies its full input in (n·B) and reads n chunks of B to sum: 2·n²·B = 2n·S
// Rate = bytes moved / time of the slowest rank (median over iterations); baseline = S / time of one
// single-thread `set` of S bytes. With 2 cores the ceiling is ~2× memcpy. NCCL's algbw (S/t) and
// busbw ((n−1)·B/t) are printed too; on 2 cores those fall as 2/(n+1) of memcpy at best.

import { benchCollective, memcpyBaseline, NodeRankPool } from '../src/runtime/comm/node';
import { openPage } from './browser';
import { warmupOf } from './pages/bench_page';
import type { CommPageCase, CommPageOptions, CommPageRecord } from './pages/comm';
import { fmt, type Row } from './stats';

export const COMM_TARGET = 0.5; // ≥ 50 % of the memcpy rate: all-gather on 2 and 4 ranks, reduce-scatter from 16 MB
const RS_TARGET_MIN_BYTES = 16 * 2 ** 20;

/** Which cases carry the target (issue 13): all-gather at every size on 2 and 4 ranks, reduce-scatter at 16 MB and up. */
function hasTarget(r: CommPageCase): boolean {
  return r.kind === 'all_gather' ? r.worldSize <= 4 : r.totalBytes >= RS_TARGET_MIN_BYTES;
}
const MB = 2 ** 20;
const TOTALS_MB = [1, 16, 64, 256];
const WORLDS = [2, 4, 8];
const KINDS = ['all_gather', 'reduce_scatter'] as const;

export interface CommRecord extends CommPageRecord {
  readonly env: 'node' | 'browser';
}

export function commCases(full: boolean): CommPageCase[] {
  const maxSab = full ? 2048 * MB : 512 * MB;
  const out: CommPageCase[] = [];
  for (const worldSize of WORLDS) {
    for (const mb of TOTALS_MB) {
      if (worldSize * mb * MB > maxSab) continue;
      for (const kind of KINDS) out.push({ kind, worldSize, totalBytes: mb * MB });
    }
  }
  return out;
}

export const bytesMoved = (c: CommPageCase): number =>
  c.kind === 'all_gather' ? (c.worldSize + 1) * c.totalBytes : 2 * c.worldSize * c.totalBytes;

async function nodeRecords(
  cases: readonly CommPageCase[],
  o: CommPageOptions,
  log: (s: string) => void,
): Promise<CommRecord[]> {
  const out: CommRecord[] = [];
  for (const n of WORLDS) {
    const mine = cases.filter((c) => c.worldSize === n);
    if (!mine.length) continue;
    const pool = await NodeRankPool.create(n);
    try {
      for (const c of mine) {
        const iters = c.totalBytes >= 64 * MB ? o.itersBig : o.itersSmall;
        const r = await benchCollective({
          kind: c.kind,
          worldSize: n,
          shardBytes: c.totalBytes / n,
          iters,
          warmup: warmupOf(c.totalBytes),
          pool,
          timeoutMs: 120_000,
        });
        // Measured right after the case (not once per size): this box is shared, its load drifts.
        const memcpyMs = memcpyBaseline(c.totalBytes, Math.max(5, iters)).medianMs;
        const rec: CommRecord = {
          env: 'node',
          ...c,
          shardBytes: r.shardBytes,
          medianMs: r.medianMs,
          timesMs: r.timesMs,
          ok: true,
          memcpyMs,
        };
        log(
          `comm node ${c.kind} n=${n} ${c.totalBytes / MB} MB: ${fmt(rec.medianMs, 1)} ms (memcpy ${fmt(rec.memcpyMs, 1)} ms)`,
        );
        out.push(rec);
      }
    } finally {
      await pool.close();
    }
  }
  return out;
}

function toRow(r: CommRecord): Row {
  const s = r.medianMs / 1000;
  const moved = bytesMoved(r) / s / 1e9;
  const memcpy = r.totalBytes / (r.memcpyMs / 1000) / 1e9;
  const algbw = r.totalBytes / s / 1e9;
  const busbw = ((r.worldSize - 1) * r.shardBytes) / s / 1e9;
  const ratio = moved / memcpy;
  const gated = hasTarget(r);
  return {
    section: 'comm',
    case: `${r.env} ${r.kind} ${r.worldSize} ranks, S=${r.totalBytes / MB} MB`,
    value: r.ok
      ? `${fmt(moved, 2)} GB/s moved (${fmt(r.medianMs, 1)} ms; algbw ${fmt(algbw, 2)}, busbw ${fmt(busbw, 2)})`
      : 'WRONG RESULT',
    baseline: `memcpy ${fmt(memcpy, 2)} GB/s`,
    ratio: `${fmt(ratio, 2)}× memcpy`,
    target: gated ? `≥ ${COMM_TARGET}× memcpy` : '',
    met: gated ? r.ok && ratio >= COMM_TARGET : null,
  };
}

export async function benchComm(
  url: string,
  full: boolean,
  log: (s: string) => void,
): Promise<{ rows: Row[]; records: CommRecord[] }> {
  const cases = commCases(full);
  const opts: CommPageOptions = { cases, itersBig: 3, itersSmall: 8 };
  const records: CommRecord[] = await nodeRecords(cases, opts, log);
  const { browser, page } = await openPage('swiftshader', `${url}/bench/pages/comm.html`);
  try {
    const res = (await page.evaluate(
      (o) => (window as unknown as { __bench: { comm(o: unknown): Promise<unknown> } }).__bench.comm(o),
      opts,
    )) as CommPageRecord[];
    records.push(...res.map((r) => ({ env: 'browser' as const, ...r })));
  } finally {
    await browser.close();
  }
  return { rows: records.map(toRow), records };
}
