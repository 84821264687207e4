// Flag parsing shared by the CLI commands: node's util.parseArgs (strict), config flags mapped to
// SimConfig paths, and usage errors as one line naming the flag and the allowed values (exit 2).

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CONFIG_FIELDS, DEFAULT_CONFIG, describeAllowed, getPath, parseConfigQuery, type SimConfig } from '../config';
import { ConfigError, oneOfMessage } from '../errors';

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
};

export const CONFIG_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  ...Object.fromEntries(Object.keys(CONFIG_FLAGS).map((f) => [f, { type: 'string' as const }])),
  set: { type: 'string', multiple: true },
};

const flagOfPath = (path: string): string => {
  const f = Object.entries(CONFIG_FLAGS).find(([, p]) => p === path)?.[0];
  return f ? `--${f}` : `--set ${path}`;
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
    const valid = `valid flags: [${Object.keys(options).map((o) => `--${o}`).join(', ')}]`;
    const msg = (e as Error).message.split('. ')[0];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`fsdp-sim ${command}: ${msg}; ${valid}`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`fsdp-sim ${command}: ${msg}; ${valid}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`fsdp-sim ${command}: ${msg}`);
    throw e;
  }
}

/** A ConfigError about a config path, reworded to name the flag the user typed. */
function flagError(command: string, e: ConfigError): UsageError {
  const flag = flagOfPath(e.field);
  const message = e.message.startsWith(e.field) ? `${flag}${e.message.slice(e.field.length)}` : e.message;
  return new UsageError(`fsdp-sim ${command}: ${message}`);
}

/** SimConfig from the config flags and --set PATH=VALUE pairs, over DEFAULT_CONFIG. */
export function configFromFlags(command: string, values: Record<string, unknown>, base: Record<string, string> = {}): SimConfig {
  const q = new URLSearchParams(base);
  for (const [flag, path] of Object.entries(CONFIG_FLAGS)) {
    const v = values[flag];
    if (typeof v !== 'string') continue;
    // on/off read as booleans for --alignment
    q.set(path, path === 'alignment' ? ({ on: 'true', off: 'false' } as Record<string, string>)[v] ?? v : v);
  }
  for (const pair of (values.set as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`fsdp-sim ${command}: --set must be PATH=VALUE (e.g. autobucketing.max_in_flight_gb=2), got '${pair}'`);
    const path = pair.slice(0, eq);
    if (!CONFIG_FIELDS.some((f) => f.path === path)) {
      throw new UsageError(`fsdp-sim ${command}: ${oneOfMessage('--set PATH', CONFIG_FIELDS.map((f) => f.path), path)}`);
    }
    q.set(path, pair.slice(eq + 1));
  }
  const { config, errors } = parseConfigQuery(q.toString());
  if (errors.length) throw flagError(command, errors[0]);
  return config;
}

/** Help lines for the config flags, with each one's allowed values. */
export function configFlagHelp(): string[] {
  return Object.entries(CONFIG_FLAGS).map(([flag, path]) => {
    const f = CONFIG_FIELDS.find((x) => x.path === path)!;
    const dflt = getPath(DEFAULT_CONFIG, path);
    return `  --${flag.padEnd(18)} ${describeAllowed(f)}${dflt === null ? '' : ` (default ${String(dflt)})`}`;
  });
}
