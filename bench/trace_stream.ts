// Bench (issue 31): peak memory of `analyze` against trace size, for 1, 8 and 64 ranks of generated
// Kineto rank files (cpu ops, launches, kernels with their args, ac2g flows, NCCL collectives,
// ProfilerSteps: ~1.15 KB of JSON per kernel, as torch.profiler writes them). Each case runs in a
// child process (bench/trace_stream_child.ts) and reports its peak RSS; the baseline is the
// whole-text reader (the file's text, then JSON.parse; at 8 × 200 MB it nears the default heap).
// Files go to $TMPDIR/fsdp-sim-stream-bench (never into the repo) and stay for a rerun.
// Targets: memory is bounded by what is kept, not the files: the heap kept once every file is read
// (live, after a full GC: each file's trace events, parsed as it is read) is under a quarter of the
// files' bytes (the text reader keeps all of their text, then parses each whole); an 8-rank profile
// of 200 MB per rank analyses under 2 GiB of RSS. Both readers run with that one forced collection,
// which lowers the text reader's peak a little below the CLI's.
//   npx tsx bench/run.ts --only stream            (1 × 50 MB, 8 × 50 MB, 64 × 4 MB)
//   npx tsx bench/run.ts --only stream --full     (adds 1 × 200 MB and 8 × 200 MB)

import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, type Row } from './stats';

const DIR = join(tmpdir(), 'fsdp-sim-stream-bench');
const MB = 1e6;
const TARGET_8X200_MIB = 2048;
/** What stays of the files once each is streamed and parsed: under a quarter of their bytes (text: all). */
const KEPT_FRACTION = 0.25;

const NCCL_KERNEL = 'ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)';
const GEMM_KERNEL =
  'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_' +
  'cublas';
/** A Kineto kernel's launch facts, as an H100 trace records them (the importer reads few of them). */
const KERNEL_ARGS = {
  queued: 0,
  device: 0,
  context: 1,
  'registers per thread': 168,
  'shared memory': 213248,
  'blocks per SM': 0.5,
  'warps per SM': 2,
  grid: [132, 1, 1],
  block: [384, 1, 1],
  'est. achieved occupancy %': 3,
};
/** What record_param_comms adds to an all-gather kernel of `ranks` ranks. */
const commArgs = (ranks: number) => ({
  'Collective name': '_allgather_base',
  'In msg nelems': 4194304,
  'Out msg nelems': 4194304 * ranks,
  'Group size': ranks,
  dtype: 'BFloat16',
  'Process Group Name': '0',
});

/** One Kineto rank file of about `bytes` of JSON (deterministic), written in chunks. */
export function writeRankFile(path: string, rank: number, ranks: number, bytes: number): void {
  const fd = openSync(path, 'w');
  let n = 0;
  const put = (s: string) => {
    n += writeSync(fd, s);
  };
  put(`{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": ${rank}, "world_size": ${ranks}},\n`);
  put('"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85031714816}],\n');
  put('"traceEvents": [\n');
  let t = 1_000_000;
  let corr = 1;
  let step = 0;
  const perStep = 2000;
  let stepStart = t;
  const parts: string[] = [];
  const flush = () => {
    put(parts.join(''));
    parts.length = 0;
  };
  const line = (e: object) => `${JSON.stringify(e)},\n`;
  const host = { pid: 100, tid: 100 };
  const profilerStep = (ts: number, dur: number) => ({
    ph: 'X',
    cat: 'user_annotation',
    name: `ProfilerStep#${step}`,
    ...host,
    ts,
    dur,
  });
  for (let k = 0; n < bytes; k++) {
    if (k % perStep === 0) {
      if (k > 0) {
        parts.push(line({ ...profilerStep(stepStart, t - stepStart), args: { 'External id': k } }));
        step++;
      }
      stepStart = t;
    }
    const comm = k % 5 === 0;
    const id = corr++;
    const stream = comm ? 20 : 7;
    parts.push(
      line({
        ph: 'X',
        cat: 'cpu_op',
        name: comm ? 'record_param_comms' : 'aten::mm',
        ...host,
        ts: t,
        dur: 12,
        args: { 'External id': id, 'Record function id': 0, 'Sequence number': k, 'Fwd thread id': 1, 'Ev Idx': k },
      }),
      line({
        ph: 'X',
        cat: 'cuda_runtime',
        name: 'cudaLaunchKernel',
        ...host,
        ts: t + 2,
        dur: 5,
        args: { 'External id': id, cbid: 211, correlation: id },
      }),
      line({ ph: 's', id, ...host, ts: t + 2, cat: 'ac2g', name: 'ac2g' }),
      line({
        ph: 'X',
        cat: 'kernel',
        name: comm ? NCCL_KERNEL : GEMM_KERNEL,
        pid: 0,
        tid: stream,
        ts: t + 8,
        dur: comm ? 40 : 25,
        args: { ...KERNEL_ARGS, 'External id': id, stream, correlation: id, ...(comm ? commArgs(ranks) : {}) },
      }),
      line({ ph: 'f', id, pid: 0, tid: stream, ts: t + 8, cat: 'ac2g', name: 'ac2g', bp: 'e' }),
    );
    t += 30;
    if (parts.length >= 5000) {
      flush();
    }
  }
  parts.push(`${JSON.stringify(profilerStep(stepStart, t - stepStart))}\n`);
  flush();
  put('],\n"traceName": "bench"}\n');
  closeSync(fd);
}

/** The rank files of one case, generated once (kept in DIR for a rerun). */
function rankFiles(ranks: number, mbPerRank: number): string[] {
  const dir = join(DIR, `${ranks}x${mbPerRank}MB`);
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: ranks }, (_, r) => {
    const p = join(dir, `rank${r}.pt.trace.json`);
    if (!existsSync(p)) writeRankFile(p, r, ranks, mbPerRank * MB);
    return p;
  });
}

interface ChildResult {
  readonly maxRssMiB: number;
  readonly keptMiB: number;
  readonly events: number;
  readonly ranks: number;
  readonly s: number;
}

/** One analysis in a child process; undefined when it dies (out of memory: exit 134). */
function child(mode: 'stream' | 'text', files: readonly string[]): ChildResult | string {
  try {
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, 'trace_stream_child.ts'), mode, ...files],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 20 },
    );
    return JSON.parse(out.trim().split('\n').pop() ?? '') as ChildResult;
  } catch (e) {
    const err = e as { status?: number; stderr?: string };
    const why = (err.stderr ?? '').split('\n').find((l) => /memory|Error/.test(l)) ?? '';
    return `exit ${err.status}: ${why}`.slice(0, 120);
  }
}

export interface StreamRecord {
  readonly ranks: number;
  readonly mbPerRank: number;
  readonly totalMiB: number;
  readonly stream: ChildResult | string;
  readonly text?: ChildResult | string;
}

export function benchTraceStream(
  full: boolean,
  log: (s: string) => void = () => {},
): { rows: Row[]; records: StreamRecord[] } {
  const cases: [number, number, boolean][] = [
    [1, 50, true],
    [8, 50, true],
    [64, 4, true],
    ...(full
      ? ([
          [1, 200, true],
          [8, 200, true],
        ] as [number, number, boolean][])
      : []),
  ];
  const rows: Row[] = [];
  const records: StreamRecord[] = [];
  for (const [ranks, mb, withText] of cases) {
    const files = rankFiles(ranks, mb);
    const totalMiB = files.reduce((t, f) => t + statSync(f).size, 0) / 2 ** 20;
    log(`stream ${ranks} × ${mb} MB…`);
    const stream = child('stream', files);
    const text = withText ? child('text', files) : undefined;
    records.push({ ranks, mbPerRank: mb, totalMiB, stream, ...(text ? { text } : {}) });
    const rss = (r: ChildResult | string | undefined) => (typeof r === 'object' ? r.maxRssMiB : Number.NaN);
    const big = ranks === 8 && mb === 200;
    const shown = (r: ChildResult | string | undefined) =>
      r === undefined ? '' : typeof r === 'object' ? `${fmt(r.maxRssMiB, 0)} (${fmt(r.s, 1)} s)` : r;
    rows.push({
      section: 'stream',
      case: `analyze ${ranks} × ${mb} MB (${fmt(totalMiB, 0)} MiB): peak RSS MiB`,
      value: shown(stream),
      baseline: shown(text),
      ratio: text === undefined ? '' : `${fmt(rss(text) / rss(stream), 1)}× less`,
      target: big ? `< ${TARGET_8X200_MIB} MiB` : '',
      met: big ? rss(stream) < TARGET_8X200_MIB : null,
    });
    const kept = typeof stream === 'object' ? stream.keptMiB : Number.NaN;
    rows.push({
      section: 'stream',
      case: `analyze ${ranks} × ${mb} MB: heap kept for the importer MiB`,
      value: fmt(kept, 0),
      baseline: typeof text === 'object' ? fmt(text.keptMiB, 0) : '',
      ratio: `${fmt(kept / totalMiB, 2)} of the files`,
      target: `< ${KEPT_FRACTION} of the files`,
      met: kept < KEPT_FRACTION * totalMiB,
    });
  }
  return { rows, records };
}
