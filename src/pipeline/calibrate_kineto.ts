// What calibration reads from a Kineto trace (the JSON torch.profiler writes, one file per rank):
// each NCCL collective kernel with its size, group and duration, each compute kernel with its op
// class and duration, and the number of ProfilerStep#N annotations. Sizes come from the kernel's
// own args (PyTorch ≥ 2.3 copies them there) or else from the record_param_comms CPU op that
// launched it (its cudaLaunchKernel carries the kernel's correlation id), as HTA's comm analysis
// joins them.

import { ImportError, err, ok, type Result } from '../errors';

export type CalibKind = 'all_gather' | 'reduce_scatter' | 'all_reduce';
export type OpClass = 'matmul' | 'attention' | 'elementwise';
export const OP_CLASSES: readonly OpClass[] = ['matmul', 'attention', 'elementwise'];

export interface CollectiveSample {
  readonly rank: number;
  readonly name: string;
  readonly kind: CalibKind;
  /** Process group name as the profiler records it ('0', 'dp', ...). */
  readonly group: string;
  readonly groupSize: number;
  /** S of the ring model: gathered output (all-gather) or full input (reduce-scatter, all-reduce), bytes. */
  readonly bytes: number;
  readonly durUs: number;
}

export interface KernelSample {
  readonly rank: number;
  readonly cls: OpClass;
  readonly durUs: number;
}

export interface TraceSamples {
  readonly collectives: readonly CollectiveSample[];
  readonly kernels: readonly KernelSample[];
  /** ProfilerStep#N annotations per rank (1 when there are none): kernel totals are per step over these. */
  readonly steps: number;
  readonly ranks: number;
  /** Communication kernels left out: another collective (send/recv, broadcast) or no size found. */
  readonly skipped: number;
}

/** Bytes per element of the dtypes record_param_comms names. */
const DTYPE_BYTES: Readonly<Record<string, number>> = {
  BFloat16: 2,
  Half: 2,
  Float: 4,
  Double: 8,
  Int: 4,
  Long: 8,
  Short: 2,
  Byte: 1,
  Char: 1,
  Bool: 1,
  Float8_e4m3fn: 1,
  Float8_e5m2: 1,
};

/** A kernel name's op class: cuBLAS / CUTLASS GEMMs are matmul, flash / mem-efficient attention is attention. */
export function opClassOfKernel(name: string): OpClass {
  if (/flash|fmha|attention|sdpa|efficient_attention/i.test(name)) return 'attention';
  if (/gemm|xmma|cublas|cutlass|matmul|wgmma/i.test(name)) return 'matmul';
  return 'elementwise';
}

function collectiveKindOf(kernel: string): CalibKind | null {
  if (/all_?gather/i.test(kernel)) return 'all_gather';
  if (/reduce_?scatter/i.test(kernel)) return 'reduce_scatter';
  if (/all_?reduce/i.test(kernel)) return 'all_reduce';
  return null;
}

interface RawEvent {
  readonly ph?: string;
  readonly cat?: string;
  readonly name?: string;
  readonly pid?: number | string;
  readonly tid?: number | string;
  readonly ts?: number;
  readonly dur?: number;
  readonly args?: Record<string, unknown>;
}

type CommArgs = Record<string, unknown>;

/** correlation id → the record_param_comms args of the CPU op around the launch with that id. */
function commArgsByCorrelation(events: readonly RawEvent[]): Map<number, CommArgs> {
  const byThread = new Map<string, RawEvent[]>();
  for (const e of events) {
    if (e.ph !== 'X' || e.name !== 'record_param_comms') continue;
    const k = `${e.pid}|${e.tid}`;
    byThread.set(k, [...(byThread.get(k) ?? []), e]);
  }
  const out = new Map<number, CommArgs>();
  if (byThread.size === 0) return out;
  for (const list of byThread.values()) list.sort((x, y) => (x.ts ?? 0) - (y.ts ?? 0));
  for (const e of events) {
    const corr = e.args?.correlation;
    if (e.ph !== 'X' || typeof corr !== 'number' || !/^cuda_(runtime|driver)$/.test(e.cat ?? '')) continue;
    const list = byThread.get(`${e.pid}|${e.tid}`);
    const t = e.ts ?? 0;
    // the last record_param_comms that started at or before the launch, if the launch is inside it
    let lo = 0;
    let hi = list?.length ?? 0;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((list![mid].ts ?? 0) <= t) lo = mid + 1;
      else hi = mid;
    }
    const op = lo > 0 ? list![lo - 1] : undefined;
    if (op && t <= (op.ts ?? 0) + (op.dur ?? 0) && op.args) out.set(corr, op.args);
  }
  return out;
}

const hasSize = (a: CommArgs | undefined): a is CommArgs => !!a && typeof a['In msg nelems'] === 'number';

function sampleOf(
  e: RawEvent,
  args: CommArgs,
  kind: CalibKind,
  rank: number,
  file: string,
): Result<CollectiveSample, ImportError> {
  const dtype = String(args.dtype ?? '');
  const size = DTYPE_BYTES[dtype];
  if (size === undefined)
    return err(
      new ImportError(
        `${file}: ${e.name}`,
        `${file}: collective '${e.name}' has dtype '${dtype}'; known: [${Object.keys(DTYPE_BYTES).join(', ')}]`,
      ),
    );
  const n = Number(args['Group size'] ?? 0);
  const nel = Number(kind === 'all_gather' ? args['Out msg nelems'] : args['In msg nelems']);
  if (!(n >= 1) || !(nel >= 0))
    return err(
      new ImportError(
        `${file}: ${e.name}`,
        `${file}: collective '${e.name}' needs 'Group size' and msg nelems, got ${JSON.stringify(args)}`,
      ),
    );
  const group = String(args['Process Group Name'] ?? args['Process Group Description'] ?? 'default');
  return ok({
    rank,
    name: e.name ?? '',
    kind,
    group,
    groupSize: n,
    bytes: nel * size,
    durUs: e.dur ?? 0,
  });
}

/** Samples of one rank file. */
function samplesOfFile(json: unknown, index: number, file: string) {
  const doc = json as {
    traceEvents?: unknown;
    distributedInfo?: { rank?: unknown };
  };
  if (!doc || !Array.isArray(doc.traceEvents))
    return err(new ImportError(file, `${file}: not a Kineto trace (no traceEvents array)`));
  const events = doc.traceEvents as RawEvent[];
  const rank = typeof doc.distributedInfo?.rank === 'number' ? doc.distributedInfo.rank : index;
  const viaLaunch = commArgsByCorrelation(events);
  const collectives: CollectiveSample[] = [];
  const kernels: KernelSample[] = [];
  let skipped = 0;
  let steps = 0;
  for (const e of events) {
    if (e.ph !== 'X') continue;
    if (/^ProfilerStep#\d+$/.test(e.name ?? '')) steps++;
    if (!/^kernel$/i.test(e.cat ?? '')) continue;
    const name = e.name ?? '';
    if (!/nccl/i.test(name)) {
      kernels.push({ rank, cls: opClassOfKernel(name), durUs: e.dur ?? 0 });
      continue;
    }
    const kind = collectiveKindOf(name);
    const corr = e.args?.correlation;
    const args = hasSize(e.args) ? e.args : typeof corr === 'number' ? viaLaunch.get(corr) : undefined;
    if (!kind || !hasSize(args)) {
      skipped++;
      continue;
    }
    const s = sampleOf(e, args, kind, rank, file);
    if (!s.ok) return s;
    collectives.push(s.value);
  }
  return ok({ collectives, kernels, steps: Math.max(1, steps), skipped });
}

/** Samples of a run's rank files (parsed JSON, in rank order unless each names its rank). */
export function traceSamples(
  files: readonly { readonly name: string; readonly json: unknown }[],
): Result<TraceSamples, ImportError> {
  const collectives: CollectiveSample[] = [];
  const kernels: KernelSample[] = [];
  let skipped = 0;
  let steps = 0;
  for (const [i, f] of files.entries()) {
    const r = samplesOfFile(f.json, i, f.name);
    if (!r.ok) return r;
    collectives.push(...r.value.collectives);
    kernels.push(...r.value.kernels);
    skipped += r.value.skipped;
    steps = Math.max(steps, r.value.steps);
  }
  return ok({
    collectives,
    kernels,
    steps: Math.max(1, steps),
    ranks: files.length,
    skipped,
  });
}
