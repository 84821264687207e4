// The field table of SimConfig: one row per leaf (dotted path, type, allowed set or range).
// validateConfig and the URL codec both walk it, so a knob added here is validated and
// URL-encoded with no other change.

import {
  AUTOBUCKETING_DEFAULTS,
  AUTOBUCKETING_KNOBS,
  DEFAULT_TORCH_PROFILE,
  type KnobSpec,
  torchProfileLabel,
} from '../backends';
import { BACKEND_NAMES } from '../backends';
import { HARDWARE_NAMES, NETWORK_NAMES } from '../estimate';
import { COMPILE_MODES, MEMORY_POLICIES, RESHARD_POLICIES } from '../graph';
import { AC_MODES, MODEL_NAMES } from '../model';
import { MAX_RANKS } from './schema';

/** The sections a config is shown in (app config panel), in display order, with their titles. */
export const FIELD_GROUPS = {
  cluster: 'Model & cluster',
  network: 'Network',
  backends: 'Backends (compile.model_backend_override)',
  autobucketing: `aot_eager_autobucketing knobs (${torchProfileLabel(DEFAULT_TORCH_PROFILE)} defaults)`,
  precision: 'Precision, noise, alignment',
  live: 'Live run',
} as const;
export type FieldGroup = keyof typeof FIELD_GROUPS;

/** What every field has: its dotted path, a short label for people and its section. */
interface FieldBase {
  readonly path: string;
  readonly label: string;
  readonly group: FieldGroup;
}

export type FieldSpec = FieldBase &
  (
    | { readonly kind: 'enum'; readonly values: readonly string[]; readonly nullable?: boolean }
    | { readonly kind: 'int'; readonly min: number; readonly max: number; readonly nullable?: boolean }
    | {
        readonly kind: 'number';
        readonly min: number;
        readonly max: number;
        readonly minOpen?: boolean;
        readonly nullable?: boolean;
      }
    | { readonly kind: 'bool' }
  );

const DTYPES = ['bf16', 'fp32', 'fp16'] as const;
const MAX_TOKENS_DIM = 1 << 20;

/** Ranges of the autobucketing knobs we know; any other knob gets a generic range by its default's type. */
const AUTOBUCKETING_RANGES: Readonly<Record<string, { min: number; max: number; minOpen?: boolean }>> = {
  max_in_flight_gb: { min: 0, max: 1024 },
  max_compute_pre_fetch: { min: 0, max: 100_000 },
  max_coll_distance: { min: 0, max: 100_000 },
  compute_overlap_multipler: { min: 0, max: 100 },
  max_bucket_memory_gb: { min: 0, max: 1024 },
  max_memory_increase_gb: { min: 0, max: 1024 },
  max_memory_increase_ratio: { min: 0, max: 100 },
  nccl_gpus_per_node: { min: 1, max: 1024 },
};

const INT_KNOBS: ReadonlySet<string> = new Set(['max_compute_pre_fetch', 'max_coll_distance', 'nccl_gpus_per_node']);

function autobucketingFields(): FieldSpec[] {
  return Object.entries(AUTOBUCKETING_DEFAULTS as Record<string, unknown>).map(([k, v]): FieldSpec => {
    // torch's knob name is the label
    const base = { path: `autobucketing.${k}`, label: k, group: 'autobucketing' } as const;
    if (typeof v === 'boolean') return { ...base, kind: 'bool' };
    const spec = (AUTOBUCKETING_KNOBS as Record<string, KnobSpec>)[k];
    if (spec?.type === 'enum') return { ...base, kind: 'enum', values: spec.values };
    if (typeof v === 'string') return { ...base, kind: 'enum', values: [v] };
    const r = AUTOBUCKETING_RANGES[k] ?? { min: 0, max: 1e6 };
    // counts are integers; sizes, ratios and multipliers are real numbers (also an unknown knob)
    return INT_KNOBS.has(k) ? { ...base, kind: 'int', min: r.min, max: r.max } : { ...base, kind: 'number', ...r };
  });
}

export const CONFIG_FIELDS: readonly FieldSpec[] = [
  { path: 'model', label: 'model preset', group: 'cluster', kind: 'enum', values: MODEL_NAMES },
  { path: 'ranks', label: 'ranks', group: 'cluster', kind: 'int', min: 1, max: MAX_RANKS },
  { path: 'localBatch', label: 'local batch', group: 'cluster', kind: 'int', min: 1, max: 4096, nullable: true },
  { path: 'seqLen', label: 'seq len', group: 'cluster', kind: 'int', min: 1, max: MAX_TOKENS_DIM, nullable: true },
  { path: 'hardware', label: 'hardware', group: 'cluster', kind: 'enum', values: HARDWARE_NAMES },
  { path: 'network', label: 'network preset', group: 'network', kind: 'enum', values: NETWORK_NAMES },
  // 10 MB/s floor: below it a step takes years and the times overflow to Infinity
  {
    path: 'bandwidthGBps',
    label: 'bandwidth (GB/s)',
    group: 'network',
    kind: 'number',
    min: 0.01,
    max: 100_000,
    nullable: true,
  },
  { path: 'latencyUs', label: 'latency α (µs)', group: 'network', kind: 'number', min: 0, max: 1e6, nullable: true },
  { path: 'backendA', label: 'backend A', group: 'backends', kind: 'enum', values: BACKEND_NAMES },
  { path: 'backendB', label: 'backend B', group: 'backends', kind: 'enum', values: BACKEND_NAMES },
  ...autobucketingFields(),
  { path: 'paramDtype', label: 'param dtype', group: 'precision', kind: 'enum', values: DTYPES },
  { path: 'reduceDtype', label: 'reduce dtype', group: 'precision', kind: 'enum', values: DTYPES },
  {
    path: 'activationCheckpointing',
    label: 'activation ckpt',
    group: 'cluster',
    kind: 'enum',
    values: AC_MODES,
    nullable: true,
  },
  { path: 'seed', label: 'seed', group: 'precision', kind: 'int', min: 0, max: 2 ** 31 - 1 },
  { path: 'jitterPct', label: 'jitter (± %)', group: 'precision', kind: 'number', min: 0, max: 50 },
  { path: 'alignment', label: 'cross-rank alignment', group: 'precision', kind: 'bool' },
  {
    path: 'straggler.rank',
    label: 'straggler rank',
    group: 'precision',
    kind: 'int',
    min: 0,
    max: MAX_RANKS - 1,
    nullable: true,
  },
  { path: 'straggler.factor', label: 'straggler factor', group: 'precision', kind: 'number', min: 1, max: 100 },
  { path: 'live.kernels', label: 'kernels', group: 'live', kind: 'enum', values: ['auto', 'webgpu', 'cpu'] },
  { path: 'live.collectiveAlgorithm', label: 'collective', group: 'live', kind: 'enum', values: ['direct', 'ring'] },
  { path: 'live.steps', label: 'steps', group: 'live', kind: 'int', min: 1, max: 10_000 },
  { path: 'live.timing', label: 'timing', group: 'live', kind: 'enum', values: ['preset', 'measured'] },
  // torchtitan's names; -1 = the ranks the other degrees leave (crossCheck rejects 0 and a bad product)
  {
    path: 'parallelism.data_parallel_shard_degree',
    label: 'dp_shard (FSDP)',
    group: 'cluster',
    kind: 'int',
    min: -1,
    max: MAX_RANKS,
  },
  {
    path: 'parallelism.data_parallel_replicate_degree',
    label: 'dp_replicate (HSDP)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
  },
  {
    path: 'parallelism.tensor_parallel_degree',
    label: 'tp (tensor parallel)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
  },
  { path: 'parallelism.gpus_per_node', label: 'GPUs per node', group: 'network', kind: 'int', min: 1, max: MAX_RANKS },
  // --- moesim: expert parallel and MoE routing (to be ported to the knob declarations) ---
  {
    path: 'parallelism.expert_parallel_degree',
    label: 'ep (expert parallel)',
    group: 'cluster',
    kind: 'int',
    min: 1,
    max: MAX_RANKS,
  },
  { path: 'moeLoadImbalance', label: 'MoE load imbalance', group: 'cluster', kind: 'number', min: 1, max: MAX_RANKS },
  // --- end moesim ---
  // torch before pytorch PR #169404 (Dec 2025): the knob's help (ui/glossary.ts) cites it
  { path: 'seqParallelGatherCopy', label: 'SP all-gather copy (older torch)', group: 'cluster', kind: 'bool' },
  {
    path: 'reshardAfterForward',
    label: 'fsdp_reshard_after_forward',
    group: 'cluster',
    kind: 'enum',
    values: RESHARD_POLICIES,
  },
  { path: 'compileMode', label: 'compile.mode', group: 'backends', kind: 'enum', values: COMPILE_MODES },
  { path: 'memoryPolicy', label: 'compile.memory_policy', group: 'backends', kind: 'enum', values: MEMORY_POLICIES },
];

/** Groups: the nested objects of SimConfig. */
export const CONFIG_GROUPS: readonly string[] = ['autobucketing', 'straggler', 'live', 'parallelism'];

/** `allowed` text for messages: `one of [a, b]` / `an integer in [1, 1024] or null`. */
export function describeAllowed(f: FieldSpec): string {
  switch (f.kind) {
    case 'enum':
      return `one of [${f.values.join(', ')}]${f.nullable ? ' or null (the default)' : ''}`;
    case 'bool':
      return 'true or false';
    case 'int':
      return `an integer in [${f.min}, ${f.max}]${f.nullable ? ' or null (the default)' : ''}`;
    case 'number':
      return `a number in ${f.minOpen ? '(' : '['}${f.min}, ${f.max}]${f.nullable ? ' or null (the default)' : ''}`;
  }
}

/** Whether v is an allowed value of f. */
export function isAllowed(f: FieldSpec, v: unknown): boolean {
  switch (f.kind) {
    case 'enum':
      return (v === null && !!f.nullable) || (typeof v === 'string' && f.values.includes(v));
    case 'bool':
      return typeof v === 'boolean';
    case 'int':
      return (
        (v === null && !!f.nullable) || (Number.isSafeInteger(v) && (v as number) >= f.min && (v as number) <= f.max)
      );
    case 'number':
      return (
        (v === null && !!f.nullable) ||
        (typeof v === 'number' && Number.isFinite(v) && (f.minOpen ? v > f.min : v >= f.min) && v <= f.max)
      );
  }
}

export function getPath(o: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (x, k) => (x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined),
      o,
    );
}

export function setPath(o: Record<string, unknown>, path: string, v: unknown): void {
  const keys = path.split('.');
  let x = o;
  for (const k of keys.slice(0, -1)) x = x[k] as Record<string, unknown>;
  x[keys[keys.length - 1]] = v;
}
