// `fsdp-sim train`: live SimpleFSDP training of the tiny model on Node worker_threads ranks
// (CPU reference kernels, or Dawn WebGPU when asked and available). Prints progress and the
// device used and where a step's time went; `--json` prints exactly
// {"device","losses","finalParamsHash","stepsPerSec","phases"} (phases: exec/phases.ts phaseReport).
// `--tp` and `--dp-replicate` train on a device mesh (torchtitan's tensor_parallel_degree and
// data_parallel_replicate_degree; dp_shard takes the rest of the ranks).
// Bad flags: one line naming the flag and the allowed values, exit code 2.

import { BACKEND_NAMES, type BackendName } from '../backends/types';
import { ConfigError, oneOfMessage } from '../errors';
import { HARDWARE_NAMES, NETWORK_NAMES, type HardwareName, type NetworkName } from '../estimate';
import { COLLECTIVE_ALGORITHMS, type CollectiveAlgorithm } from '../runtime/comm/types';
import { runTrainingNode } from '../runtime/coordinator_node';
import { formatPhases, phaseReport } from '../runtime/exec';
import { processIo, type Io } from './io';
import { describeMesh } from '../graph/mesh';
import { KERNEL_CHOICES, type KernelChoice } from '../runtime/rank';
import {
  LIVE_DEFAULT_LR,
  MAX_LIVE_RANKS,
  TIMING_MODES,
  defaultGlobalBatch,
  liveMesh,
  planTraining,
  type TimingMode,
  type TrainingOptions,
} from '../runtime/training_plan';

export const TRAIN_USAGE =
  'usage: fsdp-sim train --model tiny --ranks 1..16 [--tp T] [--dp-replicate R] --steps N --backend NAME [--seed S] ' +
  '[--kernels gpu|cpu|auto] [--collective direct|ring] [--timing preset|measured] [--hardware NAME] ' +
  '[--network NAME] [--lr X] [--global-batch B] [--every K] [--json]';

const VALUE_FLAGS = [
  '--model',
  '--ranks',
  '--tp',
  '--dp-replicate',
  '--steps',
  '--backend',
  '--seed',
  '--kernels',
  '--collective',
  '--timing',
  '--hardware',
  '--network',
  '--lr',
  '--global-batch',
  '--every',
] as const;
const BOOL_FLAGS = ['--json', '--help'] as const;

interface TrainArgs {
  readonly opts: Omit<TrainingOptions, 'onProgress' | 'signal'>;
  readonly json: boolean;
  readonly every: number;
  readonly help: boolean;
}

function pick<T extends string | number>(
  flag: string,
  allowed: readonly T[],
  raw: string,
  parse: (s: string) => unknown = (s) => s,
): T {
  const v = parse(raw);
  if (!(allowed as readonly unknown[]).includes(v)) throw new ConfigError(flag, oneOfMessage(flag, allowed, raw));
  return v as T;
}

function int(flag: string, raw: string, lo: number, hi: number): number {
  const v = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(v) || v < lo || v > hi) {
    throw new ConfigError(flag, `${flag} must be an integer in [${lo}, ${hi}], got ${JSON.stringify(raw)}`);
  }
  return v;
}

/** Parse `train` flags (argv after the command name). Throws ConfigError naming the flag. */
export function parseTrainArgs(argv: readonly string[]): TrainArgs {
  const vals = new Map<string, string>();
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [name, inline] =
      a.startsWith('--') && a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined];
    if ((BOOL_FLAGS as readonly string[]).includes(name)) {
      if (inline !== undefined) throw new ConfigError(name, `${name} takes no value, got ${JSON.stringify(inline)}`);
      bools.add(name);
    } else if ((VALUE_FLAGS as readonly string[]).includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--')))
        throw new ConfigError(name, `${name} needs a value`);
      vals.set(name, v);
    } else {
      throw new ConfigError(name, oneOfMessage('flag', [...VALUE_FLAGS, ...BOOL_FLAGS], a));
    }
  }
  const get = (f: string, dflt: string) => vals.get(f) ?? dflt;
  const lrRaw = vals.get('--lr');
  const lr = lrRaw === undefined ? LIVE_DEFAULT_LR : Number(lrRaw);
  if (!Number.isFinite(lr) || lr <= 0 || lr > 1)
    throw new ConfigError('--lr', `--lr must be a number in (0, 1], got ${JSON.stringify(lrRaw)}`);
  const ranks = int('--ranks', get('--ranks', '1'), 1, MAX_LIVE_RANKS);
  const tp = int('--tp', get('--tp', '1'), 1, MAX_LIVE_RANKS);
  const dpReplicate = int('--dp-replicate', get('--dp-replicate', '1'), 1, MAX_LIVE_RANKS);
  if (ranks % (tp * dpReplicate) !== 0) {
    throw new ConfigError(
      '--tp',
      `--tp × --dp-replicate (${tp} × ${dpReplicate}) must divide --ranks (${ranks}): dp_shard takes the rest`,
    );
  }
  const dp = ranks / tp; // data-parallel ranks: ranks of one tp group train on the same rows
  const globalBatch = int('--global-batch', get('--global-batch', String(defaultGlobalBatch(dp))), 1, 4096);
  if (globalBatch % dp !== 0) {
    throw new ConfigError(
      '--global-batch',
      `--global-batch must be divisible by the data-parallel ranks, --ranks / --tp (${dp}), got ${globalBatch}`,
    );
  }
  return {
    json: bools.has('--json'),
    help: bools.has('--help'),
    every: int('--every', get('--every', '10'), 1, 1_000_000),
    opts: {
      model: pick<'tiny'>('--model', ['tiny'], get('--model', 'tiny')),
      ranks,
      ...(tp > 1 ? { tp } : {}),
      ...(dpReplicate > 1 ? { dpReplicate } : {}),
      steps: int('--steps', get('--steps', '50'), 1, 1_000_000),
      backend: pick<BackendName>('--backend', BACKEND_NAMES, get('--backend', 'aot_eager')),
      seed: int('--seed', get('--seed', '0'), 0, 0xffffffff),
      kernels: pick<KernelChoice>('--kernels', KERNEL_CHOICES, get('--kernels', 'cpu')),
      collective: pick<CollectiveAlgorithm>('--collective', COLLECTIVE_ALGORITHMS, get('--collective', 'direct')),
      timing: pick<TimingMode>('--timing', TIMING_MODES, get('--timing', 'preset')),
      hardware: pick<HardwareName>('--hardware', HARDWARE_NAMES, get('--hardware', 'h100')),
      network: pick<NetworkName>('--network', NETWORK_NAMES, get('--network', 'nvlink-ib')),
      lr,
      globalBatch,
    },
  };
}

/** Run `train`; returns the exit code (0 ok, 1 training failed, 2 bad flags). Never calls process.exit. */
export async function trainCommand(argv: string[], io: Io = processIo): Promise<number> {
  let args: TrainArgs;
  try {
    args = parseTrainArgs(argv);
    planTraining(args.opts); // what the flags cannot say alone (a mesh the model cannot split) fails here, as bad flags
  } catch (e) {
    io.err(`fsdp-sim train: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  if (args.help) {
    io.out(TRAIN_USAGE);
    return 0;
  }
  const { opts, json, every } = args;
  const out = (s: string) => {
    if (!json) io.out(s);
  };
  out(
    `training ${opts.model} on ${opts.ranks} rank(s) (${describeMesh(liveMesh(opts))}), ${opts.steps} steps, ` +
      `backend ${opts.backend}, ` +
      `${opts.collective} collectives, seed ${opts.seed}`,
  );
  try {
    const res = await runTrainingNode({
      ...opts,
      onProgress: (p) => {
        if (p.step === 1 || p.step % every === 0 || p.step === opts.steps) {
          out(`step ${String(p.step).padStart(5)}  loss ${p.loss.toFixed(4)}  ${p.stepsPerSec.toFixed(2)} steps/s`);
        }
      },
    });
    if (json) {
      const { device, losses, finalParamsHash, stepsPerSec } = res;
      io.out(JSON.stringify({ device, losses, finalParamsHash, stepsPerSec, phases: phaseReport(res.phases) }));
    } else {
      out(`device: ${res.device}`);
      out(`where a step went (mean over ranks, steps after the first): ${formatPhases(phaseReport(res.phases).mean)}`);
      out(
        `final loss ${res.losses[res.losses.length - 1].toFixed(4)} (step 1: ${res.losses[0].toFixed(4)}), ` +
          `${res.stepsPerSec.toFixed(2)} steps/s, params hash ${res.finalParamsHash}`,
      );
    }
    return 0;
  } catch (e) {
    io.err(`fsdp-sim train: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
