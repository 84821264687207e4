// Reader of the FX graph dump format v1 (docs/ARCHITECTURE.md §8): checks every field and
// returns a typed dump, or throws ImportError naming the node (index and name) and the field.

import { ImportError, preview } from '../errors';
import type { DType } from './types';

export const FX_FORMAT = 'fsdp-sim fx dump v1';
export type FxOpcode = 'placeholder' | 'call_function' | 'output';
const OPCODES: readonly FxOpcode[] = ['placeholder', 'call_function', 'output'];

export interface FxNode {
  readonly i: number;
  readonly name: string;
  readonly op: FxOpcode;
  readonly target: string;
  readonly args: readonly string[];
  readonly shape?: readonly number[];
  readonly dtype?: DType;
  readonly torchDtype?: string; // the dtype as written, 'int64'
  readonly multi?: readonly (readonly number[])[];
  readonly estMs?: number;
  /** torch_pass dumps: the estimate at size 0 (a collective's latency) and torch's memory footprint. */
  readonly estMsSize0?: number;
  readonly sizeBytes?: number;
  /** How torch's pass classifies the node (torch_pass dumps): 'compute' marks torch's is_compute_node. */
  readonly kind?: FxKind;
}

export const FX_KINDS = ['compute', 'memory', 'view', 'wait', 'collective'] as const;
export type FxKind = (typeof FX_KINDS)[number];

export interface FxDump {
  readonly graph: 'forward' | 'backward';
  readonly source: string;
  readonly worldSize: number;
  readonly nodes: readonly FxNode[];
}

/**
 * torch dtype → ours. 64-bit integers become 'i64' (8 bytes, as torch counts them); other
 * integer and bool tensors 'i32'.
 */
export const TORCH_DTYPES: Readonly<Record<string, DType>> = {
  float32: 'fp32',
  float: 'fp32',
  bfloat16: 'bf16',
  float16: 'fp16',
  half: 'fp16',
  int64: 'i64',
  long: 'i64',
  int32: 'i32',
  int: 'i32',
  int16: 'i32',
  int8: 'i32',
  uint8: 'i32',
  bool: 'i32',
};

const MAX_DIM = 2 ** 40;

const j = (v: unknown): string => preview(v);

/** `key` locates the field for programs ('nodes[3]'), `label` for people ("node 3 'mm'"). */
function readShape(v: unknown, key: string, label: string, field: string): number[] {
  const fail = (why: string): never => {
    throw new ImportError(`${key}.${field}`, `${label}: field '${field}' ${why}`);
  };
  if (!Array.isArray(v)) fail(`must be a list of dims, got ${j(v)}`);
  const dims = v as unknown[];
  if (dims.length > 16) fail(`has rank ${dims.length} > 16`);
  dims.forEach((d, k) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0 || d > MAX_DIM)
      fail(`[${k}] must be an integer in [0, 2^40], got ${j(d)}`);
  });
  const numel = (dims as number[]).reduce((p, d) => p * d, 1);
  if (numel > Number.MAX_SAFE_INTEGER / 8) fail(`${j(v)} has too many elements`);
  return v as number[];
}

function readNode(raw: unknown, pos: number): FxNode {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ImportError(`nodes[${pos}]`, `node ${pos}: must be an object, got ${j(raw)}`);
  }
  const o = raw as Record<string, unknown>;
  const nameOk = typeof o.name === 'string' && o.name.length > 0;
  const where = `node ${pos} '${nameOk ? (o.name as string) : '?'}'`;
  const bad = (field: string, want: string): never => {
    throw new ImportError(`nodes[${pos}].${field}`, `${where}: field '${field}' ${want}, got ${j(o[field])}`);
  };
  if (!nameOk) bad('name', 'must be a non-empty string');
  if (o.i !== pos) bad('i', `must equal its position ${pos}`);
  if (typeof o.op !== 'string' || !(OPCODES as readonly string[]).includes(o.op))
    bad('op', `must be one of [${OPCODES.join(', ')}]`);
  if (typeof o.target !== 'string' || o.target === '') bad('target', 'must be a non-empty string');
  if (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string')) bad('args', 'must be a list of node names');
  const op = o.op as FxOpcode;
  const node: { -readonly [K in keyof FxNode]: FxNode[K] } = {
    i: pos,
    name: o.name as string,
    op,
    target: o.target as string,
    args: o.args as string[],
  };
  if (op !== 'output') {
    if (o.multi !== undefined) {
      if (!Array.isArray(o.multi) || o.multi.length === 0) bad('multi', 'must be a non-empty list of shapes');
      node.multi = (o.multi as unknown[]).map((s, k) => readShape(s, `nodes[${pos}]`, where, `multi[${k}]`));
      if (o.shape !== undefined) bad('shape', "must be absent when 'multi' is given");
    } else {
      if (o.shape === undefined) bad('shape', "is missing (and no 'multi')");
      node.shape = readShape(o.shape, `nodes[${pos}]`, where, 'shape');
      if (typeof o.dtype !== 'string' || TORCH_DTYPES[o.dtype] === undefined) {
        bad('dtype', `must be one of [${Object.keys(TORCH_DTYPES).join(', ')}]`);
      }
      node.dtype = TORCH_DTYPES[o.dtype as string];
      node.torchDtype = o.dtype as string;
    }
  }
  // the estimates torch's pass used (ms) and a collective's memory footprint (bytes)
  const nonNegative = (field: string, integer: boolean): number | undefined => {
    const v = o[field];
    if (v === undefined) return undefined;
    const okNumber = typeof v === 'number' && (integer ? Number.isSafeInteger(v) : Number.isFinite(v)) && v >= 0;
    if (!okNumber) bad(field, integer ? 'must be an integer ≥ 0' : 'must be a finite number ≥ 0');
    return v as number;
  };
  const estMs = nonNegative('est_ms', false);
  if (estMs !== undefined) node.estMs = estMs;
  const estMsSize0 = nonNegative('est_ms_size0', false);
  if (estMsSize0 !== undefined) node.estMsSize0 = estMsSize0;
  const sizeBytes = nonNegative('size_bytes', true);
  if (sizeBytes !== undefined) node.sizeBytes = sizeBytes;
  if (o.kind !== undefined) {
    if (typeof o.kind !== 'string' || !(FX_KINDS as readonly string[]).includes(o.kind))
      bad('kind', `must be one of [${FX_KINDS.join(', ')}]`);
    node.kind = o.kind as FxKind;
  }
  return node;
}

/** Parses one dump (an object, or its JSON text). */
export function readFxDump(json: unknown): FxDump {
  let x = json;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch (e) {
      const why = e instanceof RangeError ? 'nested too deeply' : (e as Error).message;
      throw new ImportError('json', `fx dump: not valid JSON (${why})`);
    }
  }
  if (typeof x !== 'object' || x === null || Array.isArray(x))
    throw new ImportError('dump', `fx dump must be an object, got ${j(x)}`);
  const o = x as Record<string, unknown>;
  if (o.format !== FX_FORMAT)
    throw new ImportError('format', `fx dump: field 'format' must be ${j(FX_FORMAT)}, got ${j(o.format)}`);
  if (o.graph !== 'forward' && o.graph !== 'backward') {
    throw new ImportError('graph', `fx dump: field 'graph' must be one of [forward, backward], got ${j(o.graph)}`);
  }
  const ws = o.world_size;
  if (typeof ws !== 'number' || !Number.isSafeInteger(ws) || ws < 1 || ws > 65536) {
    throw new ImportError('world_size', `fx dump: field 'world_size' must be an integer in [1, 65536], got ${j(ws)}`);
  }
  if (o.source !== undefined && typeof o.source !== 'string')
    throw new ImportError('source', `fx dump: field 'source' must be a string, got ${j(o.source)}`);
  if (!Array.isArray(o.nodes))
    throw new ImportError('nodes', `fx dump: field 'nodes' must be a list, got ${j(o.nodes)}`);
  if (o.nodes.length === 0)
    throw new ImportError('nodes', "fx dump: field 'nodes' is empty; a graph needs at least one call_function node");
  const nodes = o.nodes.map((n, k) => readNode(n, k));
  if (!nodes.some((n) => n.op === 'call_function')) {
    throw new ImportError('nodes', "fx dump: field 'nodes' has no call_function node: nothing to schedule or time");
  }
  return { graph: o.graph, source: (o.source as string | undefined) ?? '', worldSize: ws, nodes };
}
