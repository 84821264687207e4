// URL codec for SimConfig: only the fields that differ from DEFAULT_CONFIG go in the query
// (`?model=llama3-8b&ranks=8&autobucketing.max_in_flight_gb=2`). Reading is lenient field by
// field: a bad value is reported as a ConfigError and that field falls back to its default.

import { ConfigError, err, ok, type Result } from '../errors';
import { getPath, isAllowed, setPath, type FieldRule } from './fields';
import { CONFIG_FIELDS } from './knobs';
import { DEFAULT_CONFIG, type SimConfig } from './schema';
import { changedFields, crossCheck, fieldError, fieldSpec } from './validate';

function encodeValue(v: unknown): string {
  if (v === null) return 'null';
  return String(v); // numbers: shortest round-trip form; booleans: 'true' / 'false'
}

const INT_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Text from the URL → a typed value, or undefined when it cannot be one for this field. */
export function decodeValue(f: FieldRule, s: string): unknown {
  if (f.kind === 'enum') return f.nullable && (s === 'null' || s === 'auto' || s === '') ? null : s;
  if (f.kind === 'bool') return s === 'true' || s === '1' ? true : s === 'false' || s === '0' ? false : s;
  if ((f.nullable && (s === 'null' || s === 'auto')) || (f.nullable && s === '')) return null;
  // decimal text only: Number() would also read '0x10', '1e1' as a count, ' 5' and 'Infinity'
  const syntax = f.kind === 'int' ? INT_TEXT : NUMBER_TEXT;
  return syntax.test(s) ? Number(s) : s;
}

/** Query string (no leading '?') holding only the non-default fields, in field-table order. */
export function configToQuery(cfg: SimConfig): string {
  const q = new URLSearchParams();
  for (const path of changedFields(cfg)) q.set(path, encodeValue(getPath(cfg, path)));
  return q.toString();
}

export interface QueryParse {
  /** The config read from the URL; fields with a bad value keep their default. */
  readonly config: SimConfig;
  /** One error per bad key or value, in URL order. */
  readonly errors: readonly ConfigError[];
}

const NAMED_PARAMS = 3;

/**
 * `unknown URL parameter "rank": did you mean ranks, …? (and 46 more, one per config field)`: a few
 * names, never all of them.
 */
export function unknownParamMessage(key: string, known: readonly string[]): string {
  const leaf = (s: string) => (s.split('.').pop() ?? s).toLowerCase();
  const k = leaf(key);
  const near = k.length < 3 ? [] : known.filter((p) => leaf(p).includes(k) || k.includes(leaf(p)));
  const shown = (near.length ? near : known).slice(0, NAMED_PARAMS);
  const names = shown.join(', ');
  const lead = near.length ? `did you mean ${names}?` : `parameters are config fields such as ${names}`;
  const rest = known.length - shown.length;
  return `unknown URL parameter ${JSON.stringify(key)}: ${lead} (and ${rest} more, one per config field)`;
}

/**
 * Lenient read: every good field is applied over `base` (DEFAULT_CONFIG, what links are written
 * against), every bad one reported and left at the base's value.
 */
export function parseConfigQuery(search: string, base: Readonly<SimConfig> = DEFAULT_CONFIG): QueryParse {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const config = structuredClone(base) as SimConfig;
  const errors: ConfigError[] = [];
  const known = CONFIG_FIELDS.map((f) => f.path);
  for (const [key, raw] of q) {
    const f = fieldSpec(key);
    if (!f) {
      errors.push(new ConfigError(key, unknownParamMessage(key, known)));
      continue;
    }
    const v = decodeValue(f, raw);
    if (!isAllowed(f, v)) errors.push(fieldError(f, raw));
    else setPath(config as unknown as Record<string, unknown>, f.path, v);
  }
  const cross = crossCheck(config);
  if (cross) {
    errors.push(cross);
    // the mesh degrees are checked together: fall back to the default mesh as a whole
    const path = cross.field.startsWith('parallelism.') ? 'parallelism' : cross.field;
    setPath(config as unknown as Record<string, unknown>, path, structuredClone(getPath(base, path)));
  }
  return { config, errors };
}

/** Strict read: the config, or the first bad field's ConfigError. */
export function configFromQuery(search: string): Result<SimConfig, ConfigError> {
  const { config, errors } = parseConfigQuery(search);
  return errors.length ? err(errors[0]) : ok(config);
}
