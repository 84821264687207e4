// Reader of the FX graph dump format v1 (docs/ARCHITECTURE.md §8): checks every field and
// returns a typed dump, or throws ImportError naming the node (index and name) and the field.
// 2-D dumps (torch_pass gen_2d) add a top-level `mesh` and `group_names`, and per collective
// `group_size`, `group_name` and `mesh_dim`. User strings are looked up in Maps, never in plain
// objects, so a dtype or group called 'constructor' is just an unknown name.

import { ImportError, preview } from '../errors';
import { numel } from './flops';
import type { DType } from './types';

const FX_FORMAT = 'fsdp-sim fx dump v1';
type FxOpcode = 'placeholder' | 'call_function' | 'output';
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
  /** A multi-output node's dtypes, one per shape of `multi`, where the dump gives them (`multi_dtype`). */
  readonly multiDtypes?: readonly DType[];
  /** Collectives of 2-D dumps: the process group's size and name (its mesh dimension where known). */
  readonly groupSize?: number;
  readonly group?: string;
  /** A placeholder that holds no tensor (`value_type`: torch's FakeScriptObject for a DeviceMesh). */
  readonly nonTensor?: boolean;
}

const FX_KINDS = ['compute', 'memory', 'view', 'wait', 'collective'] as const;
type FxKind = (typeof FX_KINDS)[number];

/** The device mesh a 2-D dump was traced on (torchtitan's dimension names). */
export interface FxMesh {
  readonly dpReplicate: number;
  readonly dpShard: number;
  readonly tp: number;
}

export interface FxDump {
  readonly graph: 'forward' | 'backward';
  readonly source: string;
  readonly worldSize: number;
  readonly nodes: readonly FxNode[];
  readonly mesh?: FxMesh;
}

/** torch dtype → ours, each with torch's element size (bool is 1 byte, as torch's memory tracker counts it). */
const TORCH_DTYPES: ReadonlyMap<string, DType> = new Map<string, DType>([
  ['float32', 'fp32'],
  ['float', 'fp32'],
  ['bfloat16', 'bf16'],
  ['float16', 'fp16'],
  ['half', 'fp16'],
  ['int64', 'i64'],
  ['long', 'i64'],
  ['int32', 'i32'],
  ['int', 'i32'],
  ['int16', 'i16'],
  ['short', 'i16'],
  ['int8', 'i8'],
  ['uint8', 'i8'],
  ['bool', 'i8'],
  ['complex64', 'c64'],
  ['cfloat', 'c64'],
  ['complex128', 'c128'],
  ['cdouble', 'c128'],
]);
const DTYPE_LIST = `[${[...TORCH_DTYPES.keys()].join(', ')}]`;

const MAX_DIM = 2 ** 40;
/** The simulated clock counts µs in a double: past 2^53 µs it cannot tell a short kernel from none. */
export const MAX_CLOCK_US = 2 ** 53;
const MAX_EST_MS = MAX_CLOCK_US / 1000;
const MESH_KEYS: ReadonlyMap<string, keyof FxMesh> = new Map([
  ['dp_replicate', 'dpReplicate'],
  ['dp_shard', 'dpShard'],
  ['tp', 'tp'],
]);

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
  if (numel(dims as number[]) > Number.MAX_SAFE_INTEGER / 8) fail(`${j(v)} has too many elements`);
  return v as number[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Bad = (field: string, want: string) => never;

/** A dtype name as torch writes it ('bfloat16'), or a clear error: `field` names where it was. */
function readDtype(v: unknown, field: string, bad: Bad): DType {
  const d = typeof v === 'string' ? TORCH_DTYPES.get(v) : undefined;
  if (d === undefined) bad(field, `must be one of ${DTYPE_LIST}`);
  return d as DType;
}

/** `shape` + `dtype`, or `multi` (+ `multi_dtype`) for a tuple of tensors. */
function readResult(o: Record<string, unknown>, node: Mutable<FxNode>, key: string, label: string, bad: Bad): void {
  if (o.multi !== undefined) {
    if (!Array.isArray(o.multi) || o.multi.length === 0) bad('multi', 'must be a non-empty list of shapes');
    const multi = (o.multi as unknown[]).map((s, k) => readShape(s, key, label, `multi[${k}]`));
    node.multi = multi;
    if (o.shape !== undefined) bad('shape', "must be absent when 'multi' is given");
    if (o.multi_dtype !== undefined) {
      const md = o.multi_dtype;
      if (!Array.isArray(md) || md.length !== multi.length)
        bad('multi_dtype', `must be a list of ${multi.length} dtypes, one per shape of 'multi'`);
      node.multiDtypes = (md as unknown[]).map((d) => readDtype(d, 'multi_dtype', bad));
    }
    return;
  }
  if (o.shape === undefined) bad('shape', "is missing (and no 'multi')");
  node.shape = readShape(o.shape, key, label, 'shape');
  node.dtype = readDtype(o.dtype, 'dtype', bad);
  node.torchDtype = o.dtype as string;
  if (o.value_type !== undefined) {
    if (typeof o.value_type !== 'string' || o.value_type === '') bad('value_type', 'must be a non-empty string');
    node.nonTensor = true;
  }
}

/** The estimates torch's pass used (ms), a collective's memory footprint (bytes) and torch's node class. */
function readEstimates(o: Record<string, unknown>, node: Mutable<FxNode>, bad: Bad): void {
  const nonNegative = (field: string, integer: boolean): number | undefined => {
    const v = o[field];
    if (v === undefined) return undefined;
    const okNumber = typeof v === 'number' && (integer ? Number.isSafeInteger(v) : Number.isFinite(v)) && v >= 0;
    if (!okNumber) bad(field, integer ? 'must be an integer ≥ 0' : 'must be a finite number ≥ 0');
    if (!integer && (v as number) > MAX_EST_MS)
      bad(field, `must be at most 2^53 µs (${MAX_EST_MS} ms), the simulated clock's range`);
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
}

/** A collective's process group: its size, and its name (mesh_dim, else group_name through group_names). */
function readGroup(o: Record<string, unknown>, node: Mutable<FxNode>, names: ReadonlyMap<string, string>, bad: Bad) {
  if (o.group_size !== undefined) {
    const v = o.group_size;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > 65536)
      bad('group_size', 'must be an integer in [1, 65536]');
    node.groupSize = v as number;
  }
  for (const f of ['mesh_dim', 'group_name'])
    if (o[f] !== undefined && (typeof o[f] !== 'string' || o[f] === '')) bad(f, 'must be a non-empty string');
  const gn = o.group_name as string | undefined;
  const group = (o.mesh_dim as string | undefined) ?? (gn === undefined ? undefined : (names.get(gn) ?? gn));
  if (group !== undefined) node.group = group;
}

function readNode(raw: unknown, pos: number, groupNames: ReadonlyMap<string, string>): FxNode {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ImportError(`nodes[${pos}]`, `node ${pos}: must be an object, got ${j(raw)}`);
  }
  const o = raw as Record<string, unknown>;
  const nameOk = typeof o.name === 'string' && o.name.length > 0;
  const where = `node ${pos} '${nameOk ? (o.name as string) : '?'}'`;
  const bad: Bad = (field, want) => {
    throw new ImportError(`nodes[${pos}].${field}`, `${where}: field '${field}' ${want}, got ${j(o[field])}`);
  };
  if (!nameOk) bad('name', 'must be a non-empty string');
  if (o.i !== pos) bad('i', `must equal its position ${pos}`);
  if (typeof o.op !== 'string' || !(OPCODES as readonly string[]).includes(o.op))
    bad('op', `must be one of [${OPCODES.join(', ')}]`);
  if (typeof o.target !== 'string' || o.target === '') bad('target', 'must be a non-empty string');
  if (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string')) bad('args', 'must be a list of node names');
  const op = o.op as FxOpcode;
  const node: Mutable<FxNode> = {
    i: pos,
    name: o.name as string,
    op,
    target: o.target as string,
    args: o.args as string[],
  };
  if (op !== 'output') readResult(o, node, `nodes[${pos}]`, where, bad);
  readEstimates(o, node, bad);
  readGroup(o, node, groupNames, bad);
  return node;
}

/** The top-level `mesh` of a 2-D dump ({dp_shard: 4, tp: 2, mesh_dim_names: [...]}), checked against world_size. */
function readMesh(v: unknown, worldSize: number): FxMesh | undefined {
  if (v === undefined) return undefined;
  const fail = (why: string): never => {
    throw new ImportError('mesh', `fx dump: field 'mesh' ${why}, got ${j(v)}`);
  };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('must be an object of dimension sizes');
  const mesh: Mutable<FxMesh> = { dpReplicate: 1, dpShard: 1, tp: 1 };
  for (const [k, size] of Object.entries(v as object)) {
    if (k === 'mesh_dim_names') continue;
    const dim = MESH_KEYS.get(k);
    if (dim === undefined) fail(`has dimension '${k}'; allowed: [${[...MESH_KEYS.keys()].join(', ')}]`);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) fail(`'${k}' must be an integer ≥ 1`);
    mesh[dim as keyof FxMesh] = size as number;
  }
  if (mesh.dpReplicate * mesh.dpShard * mesh.tp !== worldSize)
    fail(`sizes multiply to ${mesh.dpReplicate * mesh.dpShard * mesh.tp}, not world_size ${worldSize}`);
  return mesh;
}

/** `group_names` ({"1": "dp_shard"}): torch's process-group names → mesh dimension names. */
function readGroupNames(v: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (v === undefined) return out;
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ImportError('group_names', `fx dump: field 'group_names' must be an object, got ${j(v)}`);
  for (const [k, name] of Object.entries(v as object)) {
    if (typeof name !== 'string' || name === '')
      throw new ImportError('group_names', `fx dump: field 'group_names' '${k}' must be a name, got ${j(name)}`);
    out.set(k, name);
  }
  return out;
}

/** Parses one dump (an object, or its JSON text). */
export function readFxDump(json: unknown): FxDump {
  let x = json;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x.charCodeAt(0) === 0xfeff ? x.slice(1) : x); // a UTF-8 BOM, as TextDecoder drops it
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
  const mesh = readMesh(o.mesh, ws);
  const groupNames = readGroupNames(o.group_names);
  const nodes = o.nodes.map((n, k) => readNode(n, k, groupNames));
  if (!nodes.some((n) => n.op === 'call_function')) {
    throw new ImportError('nodes', "fx dump: field 'nodes' has no call_function node: nothing to schedule or time");
  }
  const dump: FxDump = { graph: o.graph, source: (o.source as string | undefined) ?? '', worldSize: ws, nodes };
  return mesh ? { ...dump, mesh } : dump;
}
