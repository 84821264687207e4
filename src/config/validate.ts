// validateConfig: a partial, untrusted object (CLI flags, a saved file, the UI) → a full SimConfig,
// or a ConfigError naming the field, the value and the allowed values / range. Unknown keys are errors.

import { ConfigError, err, ok, oneOfMessage, preview, type Result } from '../errors';
import { MODEL_PRESETS } from '../model';
import { describeAllowed, getPath, isAllowed, setPath, type FieldRule, type FieldSpec } from './fields';
import { CONFIG_FIELDS, CONFIG_GROUPS } from './knobs';
import { epOverlapError } from './graph_trainer_passes';
import { expertParallelError, meshOfParallelism } from './parallelism';
import { DEFAULT_CONFIG, type SimConfig } from './schema';

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

const TOP_KEYS: readonly string[] = [...new Set(CONFIG_FIELDS.map((f) => f.path.split('.')[0]))];
const groupKeys = (g: string): string[] =>
  CONFIG_FIELDS.filter((f) => f.path.startsWith(`${g}.`)).map((f) => f.path.slice(g.length + 1));

/** The field's spec by dotted path (`'autobucketing.max_in_flight_gb'`), or undefined. */
export function fieldSpec(path: string): FieldSpec | undefined {
  return CONFIG_FIELDS.find((f) => f.path === path);
}

/** `path must be <allowed>, got <value>` as a ConfigError. */
export function fieldError(f: FieldRule & { readonly path: string }, got: unknown): ConfigError {
  if (f.kind === 'enum')
    return new ConfigError(f.path, oneOfMessage(f.path, f.nullable ? [...f.values, 'null'] : f.values, got));
  return new ConfigError(f.path, `${f.path} must be ${describeAllowed(f)}, got ${preview(got)}`);
}

/** Checks relations between fields (each field already valid on its own). */
export function crossCheck(cfg: SimConfig): ConfigError | undefined {
  const s = cfg.straggler.rank;
  if (s !== null && s >= cfg.ranks) {
    return new ConfigError(
      'straggler.rank',
      `straggler.rank must be an integer in [0, ${cfg.ranks - 1}] (ranks is ${cfg.ranks}) or null, got ${s}`,
    );
  }
  try {
    meshOfParallelism(cfg.ranks, cfg.parallelism);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  return expertParallelError(MODEL_PRESETS[cfg.model], cfg.parallelism) ?? epOverlapError(cfg);
}

/**
 * Fill `partial` over `base` (default DEFAULT_CONFIG) and check every field. Missing fields keep
 * the base's value; nested groups (autobucketing, straggler, live) may be partial too.
 */
export function validateConfig(
  partial: unknown,
  base: Readonly<SimConfig> = DEFAULT_CONFIG,
): Result<SimConfig, ConfigError> {
  if (!isPlainObject(partial)) {
    return err(
      new ConfigError('config', `config must be an object with keys [${TOP_KEYS.join(', ')}], got ${preview(partial)}`),
    );
  }
  for (const k of Object.keys(partial)) {
    if (!TOP_KEYS.includes(k)) return err(new ConfigError(k, oneOfMessage('config key', TOP_KEYS, k)));
    if (CONFIG_GROUPS.includes(k)) {
      const g = partial[k];
      if (!isPlainObject(g))
        return err(
          new ConfigError(k, `${k} must be an object with keys [${groupKeys(k).join(', ')}], got ${preview(g)}`),
        );
      for (const sub of Object.keys(g)) {
        if (!groupKeys(k).includes(sub))
          return err(
            new ConfigError(`${k}.${sub}`, `unknown key ${k}.${sub}: ${oneOfMessage(`${k} key`, groupKeys(k), sub)}`),
          );
      }
    }
  }
  const out = structuredClone(base) as SimConfig;
  for (const f of CONFIG_FIELDS) {
    const v = getPath(partial, f.path);
    if (v === undefined) continue;
    if (!isAllowed(f, v)) return err(fieldError(f, v));
    setPath(out as unknown as Record<string, unknown>, f.path, v);
  }
  const cross = crossCheck(out);
  return cross ? err(cross) : ok(out);
}

/** The fields where cfg differs from DEFAULT_CONFIG, as dotted paths. */
export function changedFields(cfg: SimConfig, base: Readonly<SimConfig> = DEFAULT_CONFIG): string[] {
  return CONFIG_FIELDS.filter((f) => !Object.is(getPath(cfg, f.path), getPath(base, f.path))).map((f) => f.path);
}
