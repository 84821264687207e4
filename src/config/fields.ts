// The field machinery of SimConfig: what a field row is (dotted path, type, allowed set or range,
// default, help, CLI flag), how its allowed values are worded and checked, and dotted-path access.
// The rows themselves, one per knob, are the table in knobs.ts (docs/ARCHITECTURE.md §4).

import { DEFAULT_TORCH_PROFILE, type KnobHelp, torchProfileLabel } from '../backends';

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

/** Float dtypes parameters / gradients may be communicated in. */
export const COMM_DTYPES = ['bf16', 'fp32', 'fp16'] as const;

/** A field's value: every leaf of SimConfig is one of these. */
type FieldValue = string | number | boolean | null;

/** What values a field takes: its type and allowed set or range. */
export type FieldRule =
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly nullable?: boolean }
  | { readonly kind: 'int'; readonly min: number; readonly max: number; readonly nullable?: boolean }
  | {
      readonly kind: 'number';
      readonly min: number;
      readonly max: number;
      readonly minOpen?: boolean;
      readonly nullable?: boolean;
    }
  | { readonly kind: 'bool' };

/** Everything a knob's row says besides its rule and path; `V` is the type of its value. */
export interface FieldAbout<V extends FieldValue = FieldValue> {
  /** A short label for people (the panel's). */
  readonly label: string;
  readonly group: FieldGroup;
  /** The app's default: DEFAULT_CONFIG is made of these. */
  readonly default: V;
  /** `fsdp-sim train`'s default where it differs from the app's on purpose (live.*). */
  readonly trainDefault?: V;
  /** What it does, what raising it costs, torch's / torchtitan's name (tooltips, glossary). */
  readonly help: KnobHelp;
  /** Its command-line flag (`seq-len` → --seq-len); any field is reachable with --set PATH=VALUE. */
  readonly flag?: string;
  /** The flag's own words for values (`--alignment on|off` → true / false). */
  readonly flagWords?: Readonly<Record<string, string>>;
  /** Shapes the step graph: `pass` reads its graph from an FX dump, so the flag cannot apply there. */
  readonly graphShape?: boolean;
}

/** One row of the field table: a leaf of SimConfig, by dotted path. */
export type FieldSpec = FieldRule & FieldAbout & { readonly path: string };

/** `allowed` text for messages: `one of [a, b]` / `an integer in [1, 1024] or null`. */
export function describeAllowed(f: FieldRule): string {
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
export function isAllowed(f: FieldRule, v: unknown): boolean {
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
