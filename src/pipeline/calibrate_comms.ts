// Where a Kineto trace keeps a collective's size, group and kind, in every form profilers write:
// - the NCCL kernel's own args (PyTorch ≥ 2.3: 'Collective name', 'In msg nelems', 'Out msg
//   nelems', 'dtype', 'Group size', 'Process Group Name');
// - the record_param_comms CPU op around its launch (the same fields);
// - older profilers (HTA's sample): the `nccl:all_reduce` / `nccl:_all_gather_base` op around the
//   launch, its 'Input Dims' and 'Input type' (c10d's Work records the op's input tensors).
// A kernel is joined to the CPU ops around its launch by correlation id (or the ac2g flow bound
// to it), as HTA's comm analysis joins them; fields the kernel lacks come from the innermost op.

import { preview } from '../errors';

export type CalibKind = 'all_gather' | 'reduce_scatter' | 'all_reduce';

/** What the trace says about one collective; any field may be missing. */
export interface CommInfo {
  /** torch's collective name, as found ('allreduce', '_all_gather_base', 'all_gather_into_tensor'). */
  readonly op?: string;
  readonly inNel?: number;
  readonly outNel?: number;
  readonly dtype?: string;
  readonly groupSize?: number;
  readonly group?: string;
  /** S of the ring model in bytes, as fsdp-sim's own export writes it (args.fsdp_sim.bytes). */
  readonly ringBytes?: number;
  /** A count field present but malformed (its name, its value previewed): the reason it is left out. */
  readonly bad?: { readonly field: string; readonly value: string };
}

/** Bytes per element: record_param_comms' ScalarType names and the profiler's C++ 'Input type' names. */
export const TRACE_DTYPE_BYTES: ReadonlyMap<string, number> = new Map([
  ...(['Double', 'Long', 'ComplexFloat', 'double', 'long', 'long int', 'int64_t', 'c10::complex<float>'] as const).map(
    (k) => [k, 8] as const,
  ),
  ...(['Float', 'Int', 'float', 'int', 'int32_t', 'unsigned int'] as const).map((k) => [k, 4] as const),
  ...(['BFloat16', 'Half', 'Short', 'c10::BFloat16', 'c10::Half', 'short', 'short int', 'int16_t'] as const).map(
    (k) => [k, 2] as const,
  ),
  ...(
    [
      'Byte',
      'Char',
      'Bool',
      'Float8_e4m3fn',
      'Float8_e5m2',
      'bool',
      'signed char',
      'unsigned char',
      'int8_t',
      'uint8_t',
      'c10::Float8_e4m3fn',
      'c10::Float8_e5m2',
    ] as const
  ).map((k) => [k, 1] as const),
  ['ComplexDouble', 16],
  ['c10::complex<double>', 16],
]);

type Args = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const COUNTS = ['In msg nelems', 'Out msg nelems', 'Group size'] as const;

/** The first count field that is present but no whole number ≥ 0, and its value previewed. */
function badCount(args: Args): CommInfo['bad'] {
  for (const k of COUNTS) {
    const v = args[k];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) return { field: k, value: preview(v, 40) };
  }
  return undefined;
}
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Elements of the tensors an op's 'Input Dims' lists (scalars and empty lists are no tensors). */
function inputElements(dims: unknown, types: unknown): { nel?: number; dtype?: string } {
  if (!Array.isArray(dims)) return {};
  let nel = 0;
  let dtype: string | undefined;
  let tensors = 0;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    if (!Array.isArray(d) || d.length === 0 || !d.every((x) => Number.isInteger(x) && x >= 0)) continue;
    nel += (d as number[]).reduce((p, x) => p * x, 1);
    tensors++;
    dtype ??= Array.isArray(types) ? str(types[i]) : undefined;
  }
  return tensors ? { nel, dtype } : {};
}

/** The fields one event's args carry. `opName`: a CPU op's name (`nccl:all_reduce`), else undefined. */
export function commInfoOf(args: Args | undefined, opName?: string): CommInfo {
  if (!args) return opName?.startsWith('nccl:') ? { op: opName.slice(5) } : {};
  const fromDims = opName?.startsWith('nccl:') ? inputElements(args['Input Dims'], args['Input type']) : {};
  const own = args.fsdp_sim;
  const ringBytes = typeof own === 'object' && own !== null ? num((own as Record<string, unknown>).bytes) : undefined;
  const info: { -readonly [K in keyof CommInfo]: CommInfo[K] } = {};
  const bad = badCount(args);
  if (bad !== undefined) info.bad = bad;
  // only the fields found: a merge takes the others from the ops around the launch
  const op = str(args['Collective name']) ?? (opName?.startsWith('nccl:') ? opName.slice(5) : undefined);
  const inNel = num(args['In msg nelems']) ?? fromDims.nel;
  const outNel = num(args['Out msg nelems']);
  const dtype = str(args.dtype) ?? fromDims.dtype;
  const groupSize = num(args['Group size']);
  const group = str(args['Process Group Name']) ?? str(args['Process Group Description']);
  if (op !== undefined) info.op = op;
  if (inNel !== undefined) info.inNel = inNel;
  if (outNel !== undefined) info.outNel = outNel;
  if (dtype !== undefined) info.dtype = dtype;
  if (groupSize !== undefined) info.groupSize = groupSize;
  if (group !== undefined) info.group = group;
  if (ringBytes !== undefined) info.ringBytes = ringBytes;
  return info;
}

/** `a`'s fields, with those it lacks taken from `b`. */
export function mergeInfo(a: CommInfo, b: CommInfo | undefined): CommInfo {
  return b ? { ...b, ...a } : a;
}

/** The ring-model kind of a collective name (torch's or NCCL's kernel name); null for the rest. */
export function calibKindOf(name: string): CalibKind | null {
  const n = name.toLowerCase();
  if (/all_?to_?all/.test(n)) return null;
  if (/all_?gather/.test(n)) return 'all_gather';
  if (/reduce_?scatter/.test(n)) return 'reduce_scatter';
  if (/all_?reduce/.test(n)) return 'all_reduce';
  return null;
}

/** What a collective runs, in words, for the reasons: torch's name first, NCCL's kernel name else. */
export function kindLabel(op: string | undefined, kernel: string): string {
  const k = calibKindOf(op ?? '') ?? calibKindOf(kernel);
  if (k) return k;
  const n = `${op ?? ''} ${kernel}`.toLowerCase();
  if (/all_?to_?all/.test(n)) return 'all_to_all';
  if (/broadcast/.test(n)) return 'broadcast';
  return 'send_recv';
}

export interface CpuOp {
  readonly ts: number;
  readonly end: number;
  readonly info: CommInfo;
}

export interface Launch {
  readonly ts: number;
  readonly correlation: number;
}

/** How many enclosing comm ops are merged for one launch: record_param_comms around nccl:* is 2. */
const DEPTH = 3;

/**
 * correlation → the merged CommInfo of the comm ops (innermost first) open at each launch on one
 * thread. One sweep over both lists sorted by time, with a stack of open ops: linear after sorting.
 */
export function infoAtLaunches(ops: CpuOp[], launches: Launch[], out: Map<number, CommInfo>): void {
  if (ops.length === 0) return;
  ops.sort((x, y) => x.ts - y.ts || y.end - x.end); // an outer op before the ops it holds
  launches.sort((x, y) => x.ts - y.ts);
  const open: CpuOp[] = [];
  let i = 0;
  for (const l of launches) {
    while (i < ops.length && ops[i].ts <= l.ts) {
      while (open.length && open[open.length - 1].end < ops[i].ts) open.pop();
      open.push(ops[i++]);
    }
    while (open.length && open[open.length - 1].end < l.ts) open.pop();
    if (!open.length) continue;
    let info: CommInfo = {};
    for (let d = open.length - 1; d >= Math.max(0, open.length - DEPTH); d--) info = mergeInfo(info, open[d].info);
    out.set(l.correlation, info);
  }
}
