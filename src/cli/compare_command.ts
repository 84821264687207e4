// `fsdp-sim compare`: simulate one config under several backends (default aot_eager vs
// aot_eager_autobucketing) and print the metrics table, JSON, and optionally Chrome traces.

import { join } from 'node:path';
import { BACKEND_NAMES } from '../backends';
import { ConfigError } from '../errors';
import {
  activationCheckpointingOf,
  describeHbmFit,
  hbmFit,
  meshOfParallelism,
  stepConfigOf,
  type SimConfig,
} from '../config';
import { torchtitanFlags } from '../config';
import {
  buildStepGraph,
  collectivesByGroup,
  describeMesh,
  resolveStepConfig,
  sumGroupCounts,
  type GroupCounts,
  type Mesh,
} from '../graph';
import { HARDWARE_NAMES } from '../estimate';
import { MODEL_NAMES, TRAIN_AC_MODE } from '../model';
import { runPipelineOnGraph, type PipelineResult, stepFigures } from '../pipeline';
import { EMIT_ALL_BELOW, mismatchReport, type MismatchReport, exposedCommByGroup } from '../sim';
import { mismatchText } from '../words';
import { formatDuration } from '../util';
import {
  CONFIG_OPTIONS,
  DEFAULT_BACKENDS_HELP,
  UsageError,
  configFlagHelp,
  configFromFlags,
  parseBackends,
  parseFlags,
} from './flags';
import { formatTable, rowOf, type CompareRow } from './cli_format';
import { writeRunTraces } from './run_traces';
import { TraceWriteError } from './trace_files';
import type { Io } from './io';

const COMPARE_OPTIONS = {
  ...CONFIG_OPTIONS,
  backends: { type: 'string' },
  trace: { type: 'string' },
  'per-rank': { type: 'boolean' },
  gzip: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const COMPARE_USAGE = [
  `usage: fsdp-sim compare [--model NAME] [--ranks N] [--hardware ${HARDWARE_NAMES.join('|')}] [--backends A,B]`,
  '                        [--ac none|selective|full] [--trace DIR [--per-rank] [--gzip]] [--json]',
  '',
  'Simulate one SimpleFSDP training step under each backend and compare them.',
  `  --backends A,B       backends to run, comma-separated, each one of [${BACKEND_NAMES.join(', ')}]`,
  `                       ${DEFAULT_BACKENDS_HELP}`,
  '  --trace DIR          write DIR/<backend>.trace.json (Chrome trace; open in Perfetto or HTA): every rank below',
  `                       ${EMIT_ALL_BELOW} ranks; from ${EMIT_ALL_BELOW} ranks up rank 0 only`,
  '                       (the simulator emits rank 0; the file says so)',
  '  --per-rank           with --trace: one file per rank, DIR/<backend>/rank<r>.pt.trace.json, named and',
  "                       opened as torch.profiler writes them (HTA's TraceAnalysis(trace_dir=DIR/<backend>) reads",
  '                       each rank);',
  '                       rank files an earlier run left there are removed',
  '  --gzip               with --trace: write .trace.json.gz (gzip; Perfetto, HTA and the importer read it)',
  '  --json               print {"mesh":{dp_replicate, dp_shard, tp}, "results":[{backend, stepTimeMs, exposedCommMs,',
  '                       overlapPct, peakMemoryBytes, collectives, collectivesTotal, exposedCommMsByGroup,',
  '                       peakAllocatedBytes, peakReservedBytes, tokensPerSecPerGpu}]} (collectives: launches per',
  '                       process group and kind, a bucket counting once, e.g. {"dp_shard":{"all_gather":..,',
  '                       "reduce_scatter":..,"all_reduce":..},"tp":{..}}; a 1-D mesh has one group, "dp";',
  '                       collectivesTotal: the same summed over the groups, {all_gather, reduce_scatter, all_reduce};',
  "                       exposedCommMsByGroup: rank 0's time each group's stream runs with no compute under it;",
  '                       peakMemoryBytes:',
  '                       live graph tensors on the simulated clock; allocated / reserved: the CUDA caching allocator,',
  '                       as torch reports them);',
  '                       a backend whose ranks disagree on a collective (a hang) gets {backend, error} and exit 1',
  '  --set PATH=VALUE     any other config field, e.g. --set autobucketing.max_in_flight_gb=2 (repeatable)',
  "  --ac MODE            activation checkpointing (torchtitan activation_checkpoint.mode); default: the preset's",
  ...trainAcLines(),
  '  --tp N, --dp-replicate N, --dp-shard N (-1 = the rest), --gpus-per-node N: the device mesh',
  '                       (torchtitan parallelism.*): FSDP × TP with sequence parallel, HSDP; product = --ranks',
  ...configFlagHelp(['ac']),
].join('\n');

/** --ac's default, worded from the presets' one table of train configs (model TRAIN_AC_MODE). */
function trainAcLines(): string[] {
  const of = (mode: string) => MODEL_NAMES.filter((m) => TRAIN_AC_MODE[m] === mode).join(', ');
  const pad = ' '.repeat(23);
  return [`${pad}train config: full for ${of('full')};`, `${pad}selective (op) for ${of('selective')}; else none`];
}

/** What would cut the peak: recompute first, then tensor parallel (it splits activations and logits). */
function peakHint(cfg: SimConfig, ac: string, meshTp: number): string {
  const tp = ac === 'full' && meshTp === 1 ? tpToTry(cfg) : undefined;
  return ac !== 'full' ? ' (try --ac full)' : tp ? ` (try --tp ${tp})` : '';
}

/** The table of the runs that finished, and a warning for each peak over the GPU's HBM. */
function printComparison(io: Io, cfg: SimConfig, ac: string, runs: readonly PipelineResult[]): void {
  const rows = runs.filter((r) => !r.sim.mismatch).map((r) => ({ ...rowOf(r.backend, r.metrics), ...stepFigures(r) }));
  const mesh = meshOfParallelism(cfg.ranks, cfg.parallelism);
  const run = `${cfg.model} on ${cfg.ranks} × ${cfg.hardware} (${describeMesh(mesh)})`;
  io.out(`${run}, activation checkpointing ${ac} (${runs[0]?.costLabel ?? ''})`);
  if (rows.length) io.out(formatTable(rows, cfg.hardware));
  if (mesh.tp > 1 || mesh.dpReplicate > 1 || (mesh.ep ?? 1) > 1)
    for (const r of runs) if (!r.sim.mismatch) io.out(`${r.backend}: ${describeGroupCounts(r)}`);
  const hint = peakHint(cfg, ac, mesh.tp);
  for (const r of rows) {
    const fit = hbmFit(r.peakReservedBytes, cfg.hardware);
    const said = describeHbmFit(fit, 'peak reserved');
    if (!fit.fits) io.out(`warning: ${r.backend}: ${said}: the step does not fit${hint}`);
  }
}

/** The largest TP degree of 8, 4, 2 that the model and --ranks accept (heads, kv heads, ffn, vocab, tokens). */
function tpToTry(cfg: SimConfig): number | undefined {
  return [8, 4, 2].find((tp) => {
    const parallelism = { ...cfg.parallelism, tensor_parallel_degree: tp, data_parallel_shard_degree: -1 };
    try {
      resolveStepConfig(stepConfigOf({ ...cfg, parallelism }));
      return true;
    } catch (e) {
      if (e instanceof ConfigError) return false;
      throw e;
    }
  });
}

/** `dp_shard: 81 AG, 80 RS (exposed 12.3 ms); tp: ...`: a run's launches and exposure per process group. */
function describeGroupCounts(r: PipelineResult): string {
  const short = { all_gather: 'AG', reduce_scatter: 'RS', all_reduce: 'AR', all_to_all: 'A2A' } as const;
  const exposed = exposedMsByGroup(r);
  return Object.entries(collectivesByGroup(r.schedule.graph.nodes))
    .map(([g, c]) => {
      const kinds = (Object.keys(short) as (keyof typeof short)[]).filter((k) => (c[k] ?? 0) > 0);
      const n = kinds.map((k) => `${c[k]} ${short[k]}`);
      return `${g}: ${n.join(', ')} (exposed ${formatDuration((exposed[g] ?? 0) * 1000, { unit: 'ms', digits: 2 })})`;
    })
    .join('; ');
}

/** Rank 0's exposed communication per process group, ms (sim/group_exposure.ts). */
function exposedMsByGroup(r: PipelineResult): Record<string, number> {
  const rank = r.sim.events.length > 0 ? r.sim.events[0].rank : 0;
  return Object.fromEntries(Object.entries(exposedCommByGroup(rank, r.sim.events)).map(([g, us]) => [g, us / 1000]));
}

/**
 * A run in `--json`: the table's row with `collectives` per process group (what a mesh is compared
 * by) and `collectivesTotal` summed over the groups; one shape for every mesh, so a reader never
 * branches on it. A mismatch is an error instead (a hang has no step time).
 */
type CompareResult =
  | (Omit<CompareRow, 'collectives'> & {
      readonly collectives: Record<string, GroupCounts>;
      readonly collectivesTotal: GroupCounts;
      readonly exposedCommMsByGroup: Record<string, number>;
    })
  | { readonly backend: string; readonly error: MismatchReport };

function resultOf(r: PipelineResult): CompareResult {
  if (r.sim.mismatch) return { backend: r.backend, error: mismatchReport(r.sim.mismatch) };
  const { collectives: _total, ...row } = rowOf(r.backend, r.metrics);
  const byGroup = collectivesByGroup(r.schedule.graph.nodes);
  return {
    ...row,
    collectives: byGroup,
    collectivesTotal: sumGroupCounts(Object.values(byGroup)),
    exposedCommMsByGroup: exposedMsByGroup(r),
    ...stepFigures(r),
  };
}

const meshJson = (m: Mesh) => ({
  dp_replicate: m.dpReplicate,
  dp_shard: m.dpShard,
  tp: m.tp,
  ...(m.ep !== undefined ? { ep: m.ep } : {}),
});

export async function compareCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseFlags('compare', argv, COMPARE_OPTIONS);
  if (values.help) {
    io.out(COMPARE_USAGE);
    return 0;
  }
  for (const f of ['per-rank', 'gzip'] as const) {
    if (values[f] && values.trace === undefined)
      throw new UsageError(`fsdp-sim compare: --${f} applies to --trace; give --trace DIR too`);
  }
  if (values.trace === '') throw new UsageError("fsdp-sim compare: --trace needs a directory, got ''");
  const cfg = configFromFlags('compare', values);
  const backends = parseBackends('compare', values.backends, [cfg.backendA, cfg.backendB]);
  const ac = activationCheckpointingOf(cfg);
  const graph = buildStepGraph(stepConfigOf(cfg));
  const runs = backends.map((b) => runPipelineOnGraph(graph, cfg, b));
  const ok = runs.filter((r) => !r.sim.mismatch);
  const failed = runs
    .filter((r) => r.sim.mismatch)
    .map((r) => `fsdp-sim compare: ${r.backend}: ${mismatchText(r.sim.mismatch!)}`);
  if (values.json) {
    const mesh = meshJson(meshOfParallelism(cfg.ranks, cfg.parallelism));
    const flags = Object.fromEntries(backends.map((b) => [b, torchtitanFlags(b, cfg)]));
    io.out(JSON.stringify({ mesh, results: runs.map(resultOf), torchtitanFlags: flags }));
  } else printComparison(io, cfg, ac, runs);
  // traces last: the comparison is printed even when a trace cannot be written
  if (values.trace !== undefined && ok.length) {
    try {
      await writeRunTraces(values.trace, !!values['per-rank'], ok, cfg, !!values.gzip);
      const ext = values.gzip ? '.trace.json.gz' : '.trace.json';
      const perRank = `rank*${ext.replace('.trace', '.pt.trace')}`;
      const where = (b: string) => join(values.trace!, values['per-rank'] ? `${b}/${perRank}` : `${b}${ext}`);
      if (!values.json) io.out(`traces: ${ok.map((r) => where(r.backend)).join(', ')}`);
    } catch (e) {
      if (!(e instanceof TraceWriteError)) throw e;
      failed.push(`fsdp-sim compare: ${e.message}`);
    }
  }
  for (const f of failed) io.err(f);
  return failed.length ? 1 : 0;
}
