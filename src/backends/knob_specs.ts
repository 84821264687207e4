// Backend option parsing: every knob is declared once, as a row with its type, range and help;
// unknown keys and out-of-range values are a ConfigError naming the knob, the value and the valid
// range. The config's field table derives its rows from these (docs/ARCHITECTURE.md §4).

import { ConfigError } from '../errors';

/** What a knob does and what raising it costs; `torch` names the upstream argument. */
export interface KnobHelp {
  readonly does: string;
  readonly cost?: string;
  readonly torch?: string;
}

export type KnobSpec = (
  | { readonly type: 'number'; readonly min: number; readonly max: number; readonly integer?: boolean }
  | { readonly type: 'boolean' }
  | { readonly type: 'enum'; readonly values: readonly string[] }
) & { readonly help?: KnobHelp };

export type KnobSpecs<O> = { readonly [K in keyof O]: KnobSpec };

/** The value a knob's row allows: a number, a boolean or one of its enum's strings. */
export type KnobValue<S extends KnobSpec> = S extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
  ? V
  : S extends { readonly type: 'boolean' }
    ? boolean
    : number;

function rangeText(spec: KnobSpec): string {
  if (spec.type === 'boolean') return 'true or false';
  if (spec.type === 'enum') return `one of [${spec.values.join(', ')}]`;
  const kind = spec.integer ? 'an integer' : 'a number';
  const hi = spec.max === Infinity ? '∞)' : `${spec.max}]`;
  return `${kind} in [${spec.min}, ${hi}`;
}

/**
 * Merges `options` over `defaults` after checking each key against `specs`.
 * `backend` prefixes the field name in errors (`aot_eager_autobucketing.max_in_flight_gb`).
 */
export function resolveOptions<O extends Record<string, number | boolean | string>>(
  backend: string,
  defaults: O,
  specs: KnobSpecs<O>,
  options: Readonly<Record<string, unknown>> | undefined,
): O {
  const out: Record<string, number | boolean | string> = { ...defaults };
  if (options === undefined || options === null) return out as O;
  if (typeof options !== 'object') {
    throw new ConfigError(backend, `${backend} options must be an object, got ${JSON.stringify(options)}`);
  }
  const known = Object.keys(specs);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const field = `${backend}.${key}`;
    const spec = (specs as Record<string, KnobSpec | undefined>)[key];
    if (spec === undefined || !Object.hasOwn(specs, key)) {
      const valid = known.length > 0 ? known.join(', ') : 'none';
      throw new ConfigError(field, `unknown option ${field}; valid options of ${backend}: [${valid}]`);
    }
    if (spec.type === 'enum') {
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        throw new ConfigError(field, `${field} must be ${rangeText(spec)}, got ${JSON.stringify(value)}`);
      }
      out[key] = value;
      continue;
    }
    if (spec.type === 'boolean') {
      if (typeof value !== 'boolean') {
        throw new ConfigError(field, `${field} must be ${rangeText(spec)}, got ${JSON.stringify(value)}`);
      }
      out[key] = value;
      continue;
    }
    const ok =
      typeof value === 'number' &&
      !Number.isNaN(value) &&
      value >= spec.min &&
      value <= spec.max &&
      (spec.max === Infinity ? Number.isFinite(value) : true) &&
      (!spec.integer || Number.isInteger(value));
    if (!ok) throw new ConfigError(field, `${field} must be ${rangeText(spec)}, got ${JSON.stringify(value)}`);
    out[key] = value;
  }
  return out as O;
}
