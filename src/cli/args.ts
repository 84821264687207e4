// Flag parsing shared by the CLI commands: node's util.parseArgs (strict), config flags mapped to
// SimConfig paths, and usage errors as one line naming the flag and the allowed values (exit 2).

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CONFIG_FIELDS, DEFAULT_CONFIG, describeAllowed, getPath, parseConfigQuery, type SimConfig } from '../config';
import { type ConfigError, oneOfMessage } from '../errors';
import { AUTOBUCKETING_PROFILES } from '../backends';

/** A bad flag or value: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Config flags: --flag → SimConfig path. Any other path is reachable with --set PATH=VALUE. */
export const CONFIG_FLAGS: Readonly<Record<string, string>> = {
  model: 'model',
  ranks: 'ranks',
  batch: 'localBatch',
  'seq-len': 'seqLen',
  hardware: 'hardware',
  network: 'network',
  'bandwidth-gbps': 'bandwidthGBps',
  'latency-us': 'latencyUs',
  'param-dtype': 'paramDtype',
  'reduce-dtype': 'reduceDtype',
  seed: 'seed',
  'jitter-pct': 'jitterPct',
  alignment: 'alignment',
  'straggler-rank': 'straggler.rank',
  'straggler-factor': 'straggler.factor',
  ac: 'activationCheckpointing',
  tp: 'parallelism.tensor_parallel_degree',
  'dp-replicate': 'parallelism.data_parallel_replicate_degree',
  'dp-shard': 'parallelism.data_parallel_shard_degree',
  'gpus-per-node': 'parallelism.gpus_per_node',
};

/** Config flags that shape the step graph: `pass` reads the graph from an FX dump, so they cannot apply there. */
export const GRAPH_SHAPE_FLAGS: readonly string[] = [
  'model',
  'ranks',
  'batch',
  'seq-len',
  'ac',
  'param-dtype',
  'reduce-dtype',
  'tp',
  'dp-replicate',
  'dp-shard',
];

/** Flags whose value is not the config's own text: --alignment on|off is the boolean `alignment`. */
const FLAG_VALUES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  alignment: { on: 'true', off: 'false' },
};

export const CONFIG_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  ...Object.fromEntries(Object.keys(CONFIG_FLAGS).map((f) => [f, { type: 'string' as const }])),
  set: { type: 'string', multiple: true },
  'torch-profile': { type: 'string' },
};

/** --torch-profile 2.11|2.13: the autobucketing knobs as that torch sets them (--set still wins). */
function profileParams(command: string, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const names = Object.keys(AUTOBUCKETING_PROFILES).map((k) => k.replace(/^torch-/, ''));
  const profile = AUTOBUCKETING_PROFILES[`torch-${String(value)}` as keyof typeof AUTOBUCKETING_PROFILES];
  if (profile === undefined) throw new UsageError(`fsdp-sim ${command}: ${oneOfMessage('--torch-profile', names, value)}`);
  return Object.fromEntries(Object.entries(profile).map(([k, v]) => [`autobucketing.${k}`, String(v)]));
}

/** The flag the user typed for a config path: its own flag, or `--set PATH` when set that way. */
const flagOfPath = (path: string, typed: ReadonlySet<string>): string => {
  const f = Object.entries(CONFIG_FLAGS).find(([, p]) => p === path)?.[0];
  return f && typed.has(f) ? `--${f}` : `--set ${path}`;
};

/** parseArgs with strict checking; its errors become one-line UsageErrors listing the valid flags. */
export function parseFlags<const O extends NonNullable<ParseArgsConfig['options']>, const P extends boolean = false>(
  command: string,
  args: readonly string[],
  options: O,
  allowPositionals?: P,
) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const valid = `valid flags: [${Object.keys(options)
      .map((o) => `--${o}`)
      .join(', ')}]`;
    const msg = (e as Error).message.split('\n')[0].split('. ')[0];
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(msg);
    if (ambiguous) {
      const [flag, value] = [ambiguous[1], args[args.indexOf(ambiguous[1]) + 1] ?? ''];
      throw new UsageError(
        `fsdp-sim ${command}: ${flag} takes a value; one that starts with '-' must be written ${flag}=${value}`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`fsdp-sim ${command}: ${msg}; ${valid}`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`fsdp-sim ${command}: ${msg}; ${valid}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`fsdp-sim ${command}: ${msg}`);
    throw e;
  }
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
  return config;
}

/** Help lines for the config flags, with each one's allowed values. */
export function configFlagHelp(except: readonly string[] = []): string[] {
  const profile = `  --${'torch-profile'.padEnd(18)} one of [2.11, 2.13]: autobucketing knobs as that torch sets them (default 2.11)`;
  return [profile, ...Object.entries(CONFIG_FLAGS)
    .filter(([flag]) => !except.includes(flag))
    .map(([flag, path]) => {
      const f = CONFIG_FIELDS.find((x) => x.path === path)!;
      const dflt = getPath(DEFAULT_CONFIG, path);
      return `  --${flag.padEnd(18)} ${describeAllowed(f)}${dflt === null ? '' : ` (default ${String(dflt)})`}`;
    })];
}
