// `fsdp-sim train`: live SimpleFSDP training of the tiny model on Node worker_threads ranks
// (CPU reference kernels, or Dawn WebGPU when asked and available). Prints progress and the
// device used and where a step's time went; `--json` prints exactly
// {"device","losses","finalParamsHash","stepsPerSec","phases"} (phases: exec/phases.ts phaseReport).
// `--tp` and `--dp-replicate` train on a device mesh (torchtitan's tensor_parallel_degree and
// data_parallel_replicate_degree; dp_shard takes the rest of the ranks); `--ep` splits a MoE
// model's experts over expert-parallel ranks (expert_parallel_degree; it divides dp_shard · tp).
// Bad flags: one line naming the flag and the allowed values, exit code 2.

import { BACKEND_NAMES, type BackendName } from '../backends';
import { DEFAULT_CONFIG, fieldSpec } from '../config';
import type { HardwareName, NetworkName } from '../estimate';
import { describeMesh } from '../graph';
import type { CollectiveAlgorithm } from '../runtime';
import { runTrainingNode } from '../runtime/index_node';
import {
  DEFAULT_GLOBAL_BATCH,
  LIVE_DEFAULT_LR,
  LIVE_MODELS,
  MAX_GLOBAL_BATCH,
  MAX_LIVE_LR,
  RENAMED_KERNEL_CHOICES,
  MAX_LIVE_RANKS,
  defaultGlobalBatch,
  formatPhases,
  liveMesh,
  phaseReport,
  planTraining,
  type KernelChoice,
  type LiveModel,
  type TimingMode,
  type TrainingOptions,
} from '../runtime';
import { type FlagRule, UsageError, describeRule, flagValue, helpLine, parseFlags } from './flags';
import { processIo, type Io } from './io';

/** A train flag: what it allows and its default (text, as typed), each read from where it is declared. */
interface TrainFlag {
  readonly rule: FlagRule;
  readonly dflt: string;
}

/**
 * A config knob's flag: its row's rule, and `train`'s default where the row names one (live.steps:
 * 50, live.kernels: cpu), else the app's.
 */
function knobFlag(path: string): TrainFlag {
  const f = fieldSpec(path);
  if (f === undefined) throw new Error(`train: no config knob ${path}`);
  const { path: _p, label: _l, group: _g, default: dflt, trainDefault, help: _h, ...rule } = f;
  return { rule: rule as FlagRule, dflt: String(trainDefault ?? dflt) };
}

const oneOf = (values: readonly string[], dflt: string): TrainFlag => ({ rule: { kind: 'enum', values }, dflt });
const int = (min: number, max: number, dflt: number): TrainFlag => ({
  rule: { kind: 'int', min, max },
  dflt: `${dflt}`,
});

/** The value flags of train; --global-batch defaults by the data-parallel ranks (defaultGlobalBatch). */
const TRAIN_FLAGS = {
  model: oneOf(LIVE_MODELS, 'tiny'),
  ranks: int(1, MAX_LIVE_RANKS, 1),
  tp: int(1, MAX_LIVE_RANKS, 1),
  ep: int(1, MAX_LIVE_RANKS, 1),
  'dp-replicate': int(1, MAX_LIVE_RANKS, 1),
  steps: knobFlag('live.steps'),
  backend: oneOf(BACKEND_NAMES, DEFAULT_CONFIG.backendA),
  seed: knobFlag('seed'),
  kernels: knobFlag('live.kernels'),
  collective: knobFlag('live.collectiveAlgorithm'),
  timing: knobFlag('live.timing'),
  hardware: knobFlag('hardware'),
  network: knobFlag('network'),
  lr: { rule: { kind: 'number', min: 0, max: MAX_LIVE_LR, minOpen: true }, dflt: `${LIVE_DEFAULT_LR}` },
  'global-batch': { rule: { kind: 'int', min: 1, max: MAX_GLOBAL_BATCH }, dflt: '' },
  every: int(1, 1_000_000, 10),
} as const satisfies Record<string, TrainFlag>;
type TrainFlagName = keyof typeof TRAIN_FLAGS;

const TRAIN_OPTIONS = {
  ...(Object.fromEntries(Object.keys(TRAIN_FLAGS).map((f) => [f, { type: 'string' }])) as Record<
    TrainFlagName,
    { type: 'string' }
  >),
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What each value flag takes, for a missing value's message. */
const TRAIN_ALLOWED = Object.fromEntries(Object.entries(TRAIN_FLAGS).map(([f, t]) => [f, describeRule(t.rule)]));

/** `webgpu|cpu|auto`: an enum flag's choices, for the usage line. */
const choices = (flag: TrainFlagName): string => {
  const rule: FlagRule = TRAIN_FLAGS[flag].rule;
  return rule.kind === 'enum' ? rule.values.join('|') : flag;
};

export const TRAIN_USAGE = [
  `usage: fsdp-sim train --model ${choices('model')} --ranks 1..${MAX_LIVE_RANKS} [--tp T] [--dp-replicate R] ` +
    '[--ep E] --steps N ' +
    `--backend NAME [--seed S] [--kernels ${choices('kernels')}] [--collective ${choices('collective')}] ` +
    `[--timing ${choices('timing')}] [--hardware NAME] [--network NAME] [--lr X] [--global-batch B] [--every K] ` +
    '[--json]',
  '',
  ...Object.entries(TRAIN_FLAGS).map(([f, t]) => {
    const dflt = f === 'global-batch' ? `${DEFAULT_GLOBAL_BATCH} rounded up to a multiple of --ranks / --tp` : t.dflt;
    return helpLine(f, `${describeRule(t.rule)} (default ${dflt})`);
  }),
  helpLine('json', 'print exactly {"device","losses","finalParamsHash","stepsPerSec","phases"}'),
].join('\n');

interface TrainArgs {
  readonly opts: Omit<TrainingOptions, 'onProgress' | 'signal'>;
  readonly json: boolean;
  readonly every: number;
  readonly help: boolean;
  /** What the flags said in an old spelling, for a line on stderr (the run goes on). */
  readonly notices: readonly string[];
}

/** The mesh flags' product must divide --ranks; returns the data-parallel ranks (--ranks / --tp). */
function dataParallelRanks(ranks: number, tp: number, dpReplicate: number): number {
  if (ranks % (tp * dpReplicate) !== 0) {
    throw new UsageError(
      `fsdp-sim train: --tp × --dp-replicate (${tp} × ${dpReplicate}) must divide --ranks (${ranks}): ` +
        'dp_shard takes the rest',
    );
  }
  return ranks / tp; // ranks of one tp group train on the same rows
}

/** Parse `train` flags (argv after the command name). Throws a UsageError naming the flag. */
export function parseTrainArgs(argv: readonly string[]): TrainArgs {
  const { values } = parseFlags('train', argv, TRAIN_OPTIONS, false, TRAIN_ALLOWED);
  const notices: string[] = [];
  const renamed = values.kernels === undefined ? undefined : RENAMED_KERNEL_CHOICES.get(values.kernels);
  if (renamed !== undefined) {
    notices.push(`fsdp-sim train: --kernels ${values.kernels} is now --kernels ${renamed}; running with ${renamed}`);
    values.kernels = renamed;
  }
  const get = <T>(f: TrainFlagName, dflt: string = TRAIN_FLAGS[f].dflt): T =>
    flagValue('train', f, TRAIN_FLAGS[f].rule, values[f] ?? dflt) as T;
  const [ranks, tp, dpReplicate] = [get<number>('ranks'), get<number>('tp'), get<number>('dp-replicate')];
  const dp = dataParallelRanks(ranks, tp, dpReplicate);
  const globalBatch = get<number>('global-batch', String(defaultGlobalBatch(dp)));
  if (globalBatch % dp !== 0) {
    throw new UsageError(
      `fsdp-sim train: --global-batch must be divisible by the data-parallel ranks, --ranks / --tp (${dp}), ` +
        `got ${globalBatch}`,
    );
  }
  return {
    json: !!values.json,
    help: !!values.help,
    notices,
    every: get<number>('every'),
    opts: {
      model: get<LiveModel>('model'),
      ranks,
      ...(tp > 1 ? { tp } : {}),
      ...(get<number>('ep') > 1 ? { ep: get<number>('ep') } : {}),
      ...(dpReplicate > 1 ? { dpReplicate } : {}),
      steps: get<number>('steps'),
      backend: get<BackendName>('backend'),
      seed: get<number>('seed'),
      kernels: get<KernelChoice>('kernels'),
      collective: get<CollectiveAlgorithm>('collective'),
      timing: get<TimingMode>('timing'),
      hardware: get<HardwareName>('hardware'),
      network: get<NetworkName>('network'),
      lr: get<number>('lr'),
      globalBatch,
    },
  };
}

/** Run `train`; returns the exit code (0 ok, 1 training failed, 2 bad flags). Never calls process.exit. */
export async function trainCommand(argv: readonly string[], io: Io = processIo): Promise<number> {
  let args: TrainArgs;
  try {
    args = parseTrainArgs(argv);
    for (const n of args.notices) io.err(n);
    if (args.help) {
      io.out(TRAIN_USAGE);
      return 0;
    }
    planTraining(args.opts); // what the flags cannot say alone (a mesh the model cannot split) fails here, as bad flags
  } catch (e) {
    if (e instanceof UsageError) io.err(e.message);
    else io.err(`fsdp-sim train: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
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
