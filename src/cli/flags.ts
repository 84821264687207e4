// Flag parsing shared by the CLI commands: node's util.parseArgs (strict), config flags mapped to
// SimConfig paths, and usage errors as one line naming the flag and the allowed values (exit 2).

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_PROFILES, BACKEND_NAMES, type BackendName } from '../backends';
import {
  CONFIG_FIELDS,
  DEFAULT_CONFIG,
  decodeValue,
  describeAllowed,
  fieldError,
  fieldSpec,
  getPath,
  isAllowed,
  parseConfigQuery,
  type FieldRule,
  type FieldSpec,
  type SimConfig,
} from '../config';
import { type ConfigError, oneOfMessage } from '../errors';

/** `(default: aot_eager,aot_eager_autobucketing)`: what runs without --backends (the config's backends A, B). */
export const DEFAULT_BACKENDS_HELP = `(default: ${DEFAULT_CONFIG.backendA},${DEFAULT_CONFIG.backendB})`;

/** A bad flag or value: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The rows that have a flag of their own: the flag is declared in the knob's row (config's CONFIG_FIELDS). */
const FLAGGED = CONFIG_FIELDS.filter((f): f is FieldSpec & { readonly flag: string } => f.flag !== undefined);

/** Config flags: --flag → SimConfig path. Any other path is reachable with --set PATH=VALUE. */
export const CONFIG_FLAGS: Readonly<Record<string, string>> = Object.fromEntries(FLAGGED.map((f) => [f.flag, f.path]));

/** Config flags that shape the step graph: `pass` reads the graph from an FX dump, so they cannot apply there. */
export const GRAPH_SHAPE_FLAGS: readonly string[] = FLAGGED.filter((f) => f.graphShape).map((f) => f.flag);

/** Flags whose value is not the config's own text: --alignment on|off is the boolean `alignment`. */
const FLAG_VALUES: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.fromEntries(
  FLAGGED.flatMap((f) => (f.flagWords ? [[f.flag, f.flagWords]] : [])),
);

export const CONFIG_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  ...Object.fromEntries(Object.keys(CONFIG_FLAGS).map((f) => [f, { type: 'string' as const }])),
  set: { type: 'string', multiple: true },
  'torch-profile': { type: 'string' },
};

/** The --torch-profile names (`2.11` … `2.15`), from AUTOBUCKETING_PROFILES. */
const PROFILE_NAMES = Object.keys(AUTOBUCKETING_PROFILES).map((k) => k.replace(/^torch-/, ''));

/** The profile whose knobs are the defaults (AUTOBUCKETING_DEFAULTS is one of the profiles' objects). */
const DEFAULT_PROFILE = Object.entries(AUTOBUCKETING_PROFILES)
  .find(([, p]) => p === AUTOBUCKETING_DEFAULTS)?.[0]
  .replace(/^torch-/, '');

/** --torch-profile 2.11|2.13|2.14|2.15: the autobucketing knobs as that torch sets them (--set still wins). */
function profileParams(command: string, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const profile = Object.hasOwn(AUTOBUCKETING_PROFILES, `torch-${String(value)}`)
    ? AUTOBUCKETING_PROFILES[`torch-${String(value)}` as keyof typeof AUTOBUCKETING_PROFILES]
    : undefined;
  if (profile === undefined)
    throw new UsageError(`fsdp-sim ${command}: ${oneOfMessage('--torch-profile', PROFILE_NAMES, value)}`);
  return Object.fromEntries(Object.entries(profile).map(([k, v]) => [`autobucketing.${k}`, String(v)]));
}

/** `--backends A,B`: each a backend name, none twice; `fallback` when the flag is not given. */
export function parseBackends(
  command: string,
  text: string | undefined,
  fallback: readonly BackendName[],
): BackendName[] {
  if (text === undefined) return [...fallback];
  const names = text.split(',').map((s) => s.trim());
  for (const [i, n] of names.entries()) {
    if (!(BACKEND_NAMES as readonly string[]).includes(n))
      throw new UsageError(`fsdp-sim ${command}: ${oneOfMessage('--backends entries', BACKEND_NAMES, n)}`);
    // two runs of one backend would share one trace file (and one row): a typo, not a comparison
    if (names.indexOf(n) !== i)
      throw new UsageError(`fsdp-sim ${command}: --backends names ${n} twice; give each backend once`);
  }
  return names as BackendName[];
}

/** The flag the user typed for a config path: its own flag, or `--set PATH` when set that way. */
const flagOfPath = (path: string, typed: ReadonlySet<string>): string => {
  const f = Object.entries(CONFIG_FLAGS).find(([, p]) => p === path)?.[0];
  return f && typed.has(f) ? `--${f}` : `--set ${path}`;
};

/** What a flag takes, for messages: a command's own description, else its config field's allowed values. */
function allowedOf(flag: string, allowed: Readonly<Record<string, string>>): string | undefined {
  if (Object.hasOwn(allowed, flag)) return allowed[flag];
  if (flag === 'set') return 'PATH=VALUE';
  const path = Object.hasOwn(CONFIG_FLAGS, flag) ? CONFIG_FLAGS[flag] : undefined;
  const f = path === undefined ? undefined : fieldSpec(path);
  return f && describeAllowed(f);
}

interface FlagContext {
  readonly names: readonly string[];
  readonly allowed: Readonly<Record<string, string>>;
}

/** One parseArgs error as the CLI words it: the flag, what it takes, the valid flags. */
function usageOf(command: string, e: unknown, args: readonly string[], ctx: FlagContext): UsageError | undefined {
  const code = (e as { code?: string }).code;
  const msg = (e as Error).message.split('\n')[0].split('. ')[0];
  const valid = `valid flags: [${ctx.names.map((o) => `--${o}`).join(', ')}]`;
  const usage = (text: string) => new UsageError(`fsdp-sim ${command}: ${text}`);
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(msg);
  if (ambiguous) {
    const [flag, value] = [ambiguous[1], args[args.indexOf(ambiguous[1]) + 1] ?? ''];
    return usage(`${flag} takes a value; one that starts with '-' must be written ${flag}=${value}`);
  }
  const missing = /^Option '--([\w-]+) <value>' argument missing/.exec(msg);
  if (missing) {
    const takes = allowedOf(missing[1], ctx.allowed);
    return usage(`${msg}: --${missing[1]} needs a value${takes ? `, ${takes}` : ''}`);
  }
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return usage(`${msg}; ${valid}`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return usage(msg);
  return undefined;
}

/**
 * parseArgs with strict checking; its errors become one-line UsageErrors naming the flag and what
 * it takes (`allowed`: a command's own flags; config flags say their field's values).
 */
export function parseFlags<const O extends NonNullable<ParseArgsConfig['options']>, const P extends boolean = false>(
  command: string,
  args: readonly string[],
  options: O,
  allowPositionals?: P,
  allowed: Readonly<Record<string, string>> = {},
) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (e) {
    throw usageOf(command, e, args, { names: Object.keys(options), allowed }) ?? e;
  }
}

/** A command flag's allowed values in the config's vocabulary (a knob row's rule, config/fields.ts). */
export type FlagRule = FieldRule;

/** The rule as a field named `--flag`, so that config's checks and messages apply to it as they are. */
const asField = (flag: string, rule: FlagRule): FieldRule & { readonly path: string } => ({
  ...rule,
  path: `--${flag}`,
});

/** `an integer in [1, 16]`: what a rule allows, for help and messages. */
export const describeRule = (rule: FlagRule): string => describeAllowed(asField('', rule));

/** `raw` as the value `rule` allows (read as the URL reads it), else a UsageError naming --flag and the values. */
export function flagValue(command: string, flag: string, rule: FlagRule, raw: string): unknown {
  const f = asField(flag, rule);
  const v = decodeValue(f, raw);
  if (!isAllowed(f, v)) throw new UsageError(`fsdp-sim ${command}: ${fieldError(f, raw).message}`);
  return v;
}

/** A ConfigError about a config path, reworded to name the flag the user typed. */
function flagError(command: string, e: ConfigError, typed: ReadonlySet<string>): UsageError {
  const flag = flagOfPath(e.field, typed);
  const values = FLAG_VALUES[flag.slice(2)];
  if (values && e.message.startsWith(e.field)) {
    const got = / got (.*)$/.exec(e.message)?.[1] ?? '';
    return new UsageError(
      `fsdp-sim ${command}: ${flag} must be one of [${Object.keys(values).join(', ')}], got ${got}`,
    );
  }
  const message = e.message.startsWith(e.field) ? `${flag}${e.message.slice(e.field.length)}` : e.message;
  return new UsageError(`fsdp-sim ${command}: ${message}`);
}

/** SimConfig from the config flags and --set PATH=VALUE pairs, over DEFAULT_CONFIG. */
export function configFromFlags(
  command: string,
  values: Record<string, unknown>,
  base: Record<string, string> = {},
): SimConfig {
  const q = new URLSearchParams({ ...base, ...profileParams(command, values['torch-profile']) });
  const typed = new Set<string>();
  for (const pair of (values.set as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new UsageError(
        `fsdp-sim ${command}: --set must be PATH=VALUE (e.g. autobucketing.max_in_flight_gb=2), got '${pair}'`,
      );
    const path = pair.slice(0, eq);
    if (!CONFIG_FIELDS.some((f) => f.path === path)) {
      throw new UsageError(
        `fsdp-sim ${command}: ${oneOfMessage(
          '--set PATH',
          CONFIG_FIELDS.map((f) => f.path),
          path,
        )}`,
      );
    }
    q.set(path, pair.slice(eq + 1));
  }
  // a flag wins over --set of the same path (it is the more specific of the two)
  for (const [flag, path] of Object.entries(CONFIG_FLAGS)) {
    const v = values[flag];
    if (typeof v !== 'string') continue;
    typed.add(flag);
    // own keys only: `--alignment constructor` is a bad value, not Object's constructor
    const mapped = FLAG_VALUES[flag];
    q.set(path, mapped && Object.hasOwn(mapped, v) ? mapped[v] : v);
  }
  const { config, errors } = parseConfigQuery(q.toString());
  if (errors.length) throw flagError(command, errors[0], typed);
  // the factor alone changes nothing: refused whether given as --straggler-factor or --set
  if (q.has('straggler.factor') && config.straggler.rank === null) {
    const flag = flagOfPath('straggler.factor', typed);
    throw new UsageError(`fsdp-sim ${command}: ${flag} applies to the straggler; give --straggler-rank R too`);
  }
  refuseInert(command, q, config, typed);
  return config;
}

/** Knobs the config's compile mode never reads: refused by name with the reason, never taken silently. */
function refuseInert(command: string, q: URLSearchParams, config: SimConfig, typed: ReadonlySet<string>): void {
  const why = inertKnob(
    (path) => q.has(path),
    config,
    (path) => flagOfPath(path, typed),
  );
  if (why !== undefined) throw new UsageError(`fsdp-sim ${command}: ${why}`);
}

/**
 * graph_trainer's flags that only its aot_fx_trace graph reads, and what jit does instead. cudaGraphs
 * is not one: under jit its 'on' is FSDP2's (torchtitan's core trainer, config/torchtitan_flags.ts).
 */
const AOT_FX_TRACE_ONLY: readonly { readonly path: string; readonly torch: string; readonly instead: string }[] = [
  { path: 'memoryPolicy', torch: 'compile.memory_policy', instead: ' (--ac chooses what is recomputed)' },
  { path: 'fsdpAgRsOverlap', torch: 'compile.enable_fsdp_ag_rs_overlap', instead: '' },
  { path: 'fsdpDenseRegionOverlap', torch: 'compile.enable_fsdp_dense_region_overlap', instead: '' },
];

/**
 * Why a knob set in `config` (`given(path)`) changes nothing under its compile mode, or undefined:
 * memoryPolicy and the FSDP overlap flags under jit, activation checkpointing under aot_fx_trace.
 * `name` words the knob (its flag).
 */
export function inertKnob(
  given: (path: string) => boolean,
  config: SimConfig,
  name: (path: string) => string,
): string | undefined {
  const aotOnly = AOT_FX_TRACE_ONLY.find((k) => given(k.path));
  if (aotOnly !== undefined && config.compileMode === 'jit')
    return (
      `${name(aotOnly.path)} applies to compileMode=aot_fx_trace (graph_trainer's ${aotOnly.torch}); under ` +
      `compileMode=jit it changes nothing${aotOnly.instead}: give --set compileMode=aot_fx_trace too`
    );
  if (given('activationCheckpointing') && config.compileMode === 'aot_fx_trace')
    return (
      `${name('activationCheckpointing')} changes nothing under compileMode=aot_fx_trace (graph_trainer reads ` +
      'no AC mode; its memory policy chooses what is recomputed): use --set memoryPolicy=... instead'
    );
  return undefined;
}

/** `  --flag              text`: one help line, the flag padded to the text column. */
export const helpLine = (flag: string, text: string): string => `  --${flag.padEnd(18)} ${text}`;

/** Help lines for the config flags, with each one's allowed values and default (from the declarations). */
export function configFlagHelp(except: readonly string[] = []): string[] {
  const dflt = DEFAULT_PROFILE === undefined ? '' : ` (default ${DEFAULT_PROFILE})`;
  const profile = `one of [${PROFILE_NAMES.join(', ')}]: autobucketing knobs as that torch sets them${dflt}`;
  const fields = Object.entries(CONFIG_FLAGS)
    .filter(([flag]) => !except.includes(flag))
    .map(([flag, path]) => {
      const f = fieldSpec(path);
      const mapped = Object.hasOwn(FLAG_VALUES, flag) ? FLAG_VALUES[flag] : undefined;
      const value = getPath(DEFAULT_CONFIG, path);
      // a flag with its own words (--alignment on|off) shows them, its default too
      const shown = mapped ? Object.keys(mapped).find((k) => mapped[k] === String(value)) : value;
      const allowed = mapped ? `one of [${Object.keys(mapped).join(', ')}]` : f ? describeAllowed(f) : 'a config value';
      return helpLine(flag, `${allowed}${value === null ? '' : ` (default ${String(shown)})`}`);
    });
  return [helpLine('torch-profile', profile), ...fields];
}
