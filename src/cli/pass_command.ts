// `fsdp-sim pass`: run a backend's graph pass on a graph PyTorch produced (an FX dump, or a
// forward + backward pair) and report what it changed against aot_eager on the same graph.

import {
  BACKEND_NAMES,
  BACKEND_PASSES,
  compareWithTorch,
  logMismatches,
  matchLogGraphs,
  parseTorchPassLog,
  type BackendName,
  type PassStats,
  type Schedule,
  type TorchLogGraph,
} from '../backends';
import { ImportError } from '../errors';
import { HARDWARE_NAMES, type NetworkName } from '../estimate';
import { countKinds, graphToString, importFxGraph, type StepGraph } from '../graph';
import type { SimConfig } from '../config';
import { runPipelineOnGraph, type PipelineResult } from '../pipeline';
import { mismatchReport } from '../sim';
import { formatDuration, formatPercent, mibText, fixed } from '../util';
import { logMismatchText, mismatchText, reasonText, wordedAgreement } from '../words';

import {
  CONFIG_FLAGS,
  CONFIG_OPTIONS,
  GRAPH_SHAPE_FLAGS,
  UsageError,
  configFlagHelp,
  configFromFlags,
  parseBackends,
  parseFlags,
} from './flags';
import { readInputText, stdinOnce, type Io } from './io';

/** torch's millisecond estimates as pass prints them: 3 decimals, in ms ('0.490 ms'). */
const msText = (ms: number, bare = false) => formatDuration(ms * 1000, { unit: 'ms', digits: 3, bare });

/** The backend pass runs without --backend; the network for collectives a dump leaves untimed (torch's estimator). */
const PASS_BACKEND: BackendName = 'aot_eager_autobucketing';
const PASS_NETWORK: NetworkName = 'nccl-analytical';

const PASS_OPTIONS = {
  ...CONFIG_OPTIONS,
  'fx-graph': { type: 'string', multiple: true },
  backend: { type: 'string' },
  json: { type: 'boolean' },
  'print-graph': { type: 'boolean' },
  'torch-log': { type: 'string' },
  progress: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * Most node-steps one `pass` simulates (FX nodes × ranks simulated × 2 runs): ~2 µs each, so about
 * half a minute. Ranks are simulated one by one only when they differ (jitter, a straggler); a
 * world_size of 65,536 with --jitter-pct took 111 s on a tiny graph before this limit.
 */
const MAX_PASS_WORK = 2 ** 24;
/** Work over this many node-steps prints its progress on stderr (--progress: any). */
const PROGRESS_WORK = 2 ** 22;

export const PASS_USAGE = [
  `usage: fsdp-sim pass --fx-graph FILE [FILE2] [--backend NAME] [--hardware ${HARDWARE_NAMES.join('|')}] [--json]`,
  '',
  'Import a torch FX graph dump (format: docs/ARCHITECTURE.md §8; FILE2 = the backward graph),',
  'run a backend on it and compare with aot_eager on the same graph.',
  `  --backend NAME       one of [${BACKEND_NAMES.join(', ')}] (default ${PASS_BACKEND})`,
  '  --json               print {collectivesBefore, collectivesAfter, buckets, exposedMsBefore, exposedMsAfter,',
  '                       peakBytesBefore, peakBytesAfter}',
  "                       + torch's own accounting: potentialExposedMs, scheduledExposedMs, graphs (per FX graph:",
  '                       overlapping, buckets by original name, peaks), reasons; with --torch-log, agreement',
  "  --torch-log LOG      torch's DEBUG log of the pass on the same graph(s): print how far the decisions agree",
  '                       (bucket pairs, prefetches, collectives after) and the first disagreements, both',
  "                       sides' reasons",
  `  --progress           a progress line per run on stderr (default: when over ${PROGRESS_WORK} node-steps)`,
  '  --print-graph        print the graph in the order the backend scheduled it, one line per node (as FX prints)',
  "                       collective times: the dump's est_ms where it has them, else --network",
  `                       (default ${PASS_NETWORK})`,
  '  --set PATH=VALUE     any other config field (repeatable)',
  '                       (the dump fixes the graph: model, ranks, batch, sequence, AC and dtypes do not apply)',
  ...configFlagHelp(GRAPH_SHAPE_FLAGS),
].join('\n');

const countCollectives = (s: Schedule) => {
  const k = countKinds(s.graph);
  return (k.all_gather ?? 0) + (k.reduce_scatter ?? 0) + (k.all_reduce ?? 0); // tp all-reduces count, as in torch
};

type PassValues = ReturnType<typeof parseFlags<typeof PASS_OPTIONS, true>>['values'];

/** The dump files and the backend the flags name, refused as usage errors when they cannot go together. */
function passTarget(values: PassValues, positionals: readonly string[]): { files: string[]; backend: BackendName } {
  const files = [...(values['fx-graph'] ?? []), ...positionals];
  if (files.length === 0)
    throw new UsageError(
      'fsdp-sim pass: --fx-graph FILE is required (an FX graph dump; a second FILE adds the backward graph)',
    );
  if (files.length > 2)
    throw new UsageError(`fsdp-sim pass: --fx-graph takes one or two files (forward, backward), got ${files.length}`);
  const [backend] = parseBackends('pass', values.backend, [PASS_BACKEND]);
  if (values.backend?.includes(','))
    throw new UsageError(`fsdp-sim pass: --backend takes one name, got '${values.backend}'`);
  const shape = GRAPH_SHAPE_FLAGS.filter((f) => (values as Record<string, unknown>)[f] !== undefined);
  if (shape.length)
    throw new UsageError(
      `fsdp-sim pass: --${shape[0]} does not apply: the FX dump fixes the graph (its ranks, shapes and dtypes)`,
    );
  // the same fields by --set: as inert as their flags
  const shapePaths = GRAPH_SHAPE_FLAGS.map((f) => CONFIG_FLAGS[f]);
  const set = ((values as { set?: string[] }).set ?? []).find((p) => shapePaths.some((s) => p.startsWith(`${s}=`)));
  if (set !== undefined)
    throw new UsageError(
      `fsdp-sim pass: --set ${set} does not apply: the FX dump fixes the graph (its world size, shapes and dtypes)`,
    );
  return { files, backend };
}

/** Each --fx-graph file read and parsed as JSON (a file that is not JSON is a usage error). */
async function readDumps(files: readonly string[]): Promise<unknown[]> {
  const dumps: unknown[] = [];
  for (const f of files) {
    const text = await passInput(f, '--fx-graph');
    try {
      dumps.push(JSON.parse(text));
    } catch (e) {
      throw new UsageError(`fsdp-sim pass: --fx-graph '${f}' is not JSON: ${(e as Error).message}`);
    }
  }
  return dumps;
}

export async function passCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags('pass', argv, PASS_OPTIONS, true);
  if (values.help) {
    io.out(PASS_USAGE);
    return 0;
  }
  const { files, backend } = passTarget(values, positionals);
  // torch's own estimator is the analytical NCCL model: the default for collectives a dump leaves untimed
  const cfg = configFromFlags('pass', values, { network: PASS_NETWORK });
  const logPath = values['torch-log'];
  stdinOnce('pass', [...files, logPath]);
  if (logPath !== undefined && backend !== PASS_BACKEND)
    throw new UsageError(`fsdp-sim pass: --torch-log applies to ${PASS_BACKEND} (the pass torch logs), not ${backend}`);
  const torchLog = logPath === undefined ? undefined : await readTorchLog(logPath);
  const dumps = await readDumps(files);
  const imported = importFxGraph(dumps.length === 1 ? dumps[0] : dumps);
  if (!imported.ok) {
    io.err(`fsdp-sim pass: ${files.join(', ')}: ${imported.error.message}`);
    return 1;
  }
  const work = passWork(imported.value, cfg, files);
  const progress = values.progress || work > PROGRESS_WORK ? (k: number) => io.err(`pass: ${k}/2 runs`) : undefined;
  const before = runPipelineOnGraph(imported.value, cfg, 'aot_eager');
  progress?.(1);
  const after = runPipelineOnGraph(imported.value, cfg, backend);
  progress?.(2);
  const hang = before.sim.mismatch ?? after.sim.mismatch;
  if (hang) {
    // a simulated hang has no step, exposure or peak to report: an error in every output
    if (values.json) io.out(JSON.stringify({ error: mismatchReport(hang) }));
    io.err(`fsdp-sim pass: ${after.sim.mismatch ? backend : 'aot_eager'}: ${mismatchText(hang)}`);
    return 1;
  }
  const agreement = torchLog && agreementWith(logPath!, after.schedule, torchLog.graphs, torchLog.cutShort);
  // said before any agreement figure: a log of another pass makes every figure meaningless
  for (const w of agreement?.warnings ?? []) io.err(`warning: --torch-log '${logPath}': ${w}`);
  const out = passReport(before, after, agreement);
  if (values.json) {
    io.out(JSON.stringify(out));
    return 0;
  }
  const named = files.map((f) => (f === '-' ? 'standard input' : f)).join(' + ');
  io.out(`${backend} on ${named} (${imported.value.meta.worldSize} ranks, ${after.costLabel})`);
  printPass(io, backend, out);
  if (values['print-graph']) io.out(graphToString(after.schedule.graph));
  return 0;
}

/**
 * The node-steps the two runs simulate, refused over MAX_PASS_WORK before any runs: names the
 * dump's world_size, the flag that makes every rank simulated, and the limit.
 */
function passWork(graph: StepGraph, cfg: SimConfig, files: readonly string[]): number {
  const ranks = graph.meta.worldSize;
  const why =
    cfg.jitterPct > 0
      ? `--jitter-pct ${cfg.jitterPct}`
      : cfg.straggler.rank !== null && cfg.straggler.factor !== 1
        ? `--straggler-rank ${cfg.straggler.rank}`
        : undefined;
  // rank by rank, and with alignment off each rank also plans its own schedule
  const perRank = why === undefined ? 1 : ranks * (cfg.alignment ? 1 : 2);
  const work = graph.nodes.length * perRank * 2;
  if (work > MAX_PASS_WORK && why !== undefined)
    throw new UsageError(
      `fsdp-sim pass: ${files.join(', ')}: world_size ${ranks} with ${why} simulates every rank: ` +
        `${graph.nodes.length} nodes × ${perRank} × 2 runs = ${work} node-steps, ` +
        `over the limit of ${MAX_PASS_WORK} ` +
        `(about half a minute); drop ${why.split(' ')[0]} (symmetric ranks are simulated once) or use a dump ` +
        `with world_size ≤ ${Math.floor(MAX_PASS_WORK / (graph.nodes.length * 2 * (cfg.alignment ? 1 : 2)))}`,
    );
  return work;
}

/** What `pass --json` prints: the pass against aot_eager on the same graph, torch's accounting, the agreement. */
function passReport(before: PipelineResult, after: PipelineResult, log: ReturnType<typeof agreementWith> | undefined) {
  return {
    collectivesBefore: countCollectives(before.schedule),
    collectivesAfter: countCollectives(after.schedule),
    buckets: after.schedule.buckets.map((b) => [...b.members]),
    exposedMsBefore: before.metrics.exposedCommUs / 1000,
    exposedMsAfter: after.metrics.exposedCommUs / 1000,
    peakBytesBefore: before.metrics.peakMemoryBytes,
    peakBytesAfter: after.metrics.peakMemoryBytes,
    ...torchAccounting(after.schedule),
    ...(log ? { agreement: log.agreement.map(wordedAgreement), torchLogWarnings: log.warnings } : {}),
  };
}

/** The text report: before → after, the buckets, then per FX graph torch's own accounting. */
function printPass(io: Io, backend: BackendName, out: ReturnType<typeof passReport>): void {
  io.out(`passes:        ${BACKEND_PASSES[backend].join(' → ')}`);
  io.out(`collectives:   ${out.collectivesBefore} → ${out.collectivesAfter} (${out.buckets.length} buckets)`);
  io.out(`exposed comm:  ${msText(out.exposedMsBefore)} → ${msText(out.exposedMsAfter)}`);
  io.out(`peak live tensors: ${mibText(out.peakBytesBefore)} → ${mibText(out.peakBytesAfter)}`);
  for (const [i, b] of out.buckets.entries()) io.out(`  bucket ${i}: ${b.join(', ')}`);
  for (const g of out.graphs ?? []) printGraphStats(io, g);
  for (const a of out.agreement ?? []) printAgreement(io, a);
}

/** One FX graph's lines: where its estimates came from, its pre-bucketing, torch's exposed and peak figures. */
function printGraphStats(io: Io, g: PassStats): void {
  const e = g.estimates;
  const source =
    e.fromGraph === e.total
      ? "torch's, from the dump"
      : e.fromGraph === 0
        ? 'the cost model'
        : `torch's for ${e.fromGraph} of ${e.total} nodes, the cost model for the rest`;
  io.out(`estimates (${g.phase}): ${source}`);
  const pb = g.preBucketing;
  if (pb) {
    const timed = pb.estimator === 'cost-model' ? 'the cost model' : "torch 2.13's analytical NCCL model";
    const what = `${pb.buckets.length} FSDP buckets, cap ${fixed(pb.capMb, 1)} MB`;
    io.out(`pre-bucketing (${g.phase}): ${what}; merged collectives timed by ${timed}`);
  }
  const exposed = `scheduled exposed ${msText(g.scheduledExposedMs, true)} of ${msText(g.potentialExposedMs)}`;
  const peaks = `original ${mibText(g.originalPeakBytes)}, allowed ${mibText(g.allowedPeakBytes)}`;
  io.out(`torch accounting (${g.phase}): ${exposed}; peak ${mibText(g.peakBytes)} (${peaks})`);
}

/** An input of pass read as analyze reads one (bounded, gzip, BOM); a file it cannot read is a usage error. */
async function passInput(path: string, flag: string): Promise<string> {
  try {
    // an FX dump is JSON, so UTF-8: a bad byte would become U+FFFD in a node's name (torch logs are read as given)
    return await readInputText(path, `${flag} `, undefined, flag === '--fx-graph');
  } catch (e) {
    if (e instanceof ImportError) throw new UsageError(`fsdp-sim pass: ${e.message}`);
    throw e;
  }
}

/** torch's pass log: its graphs, and whether the text stops mid-line (a log cut short, e.g. by a full disk). */
async function readTorchLog(path: string): Promise<{ graphs: TorchLogGraph[]; cutShort: boolean }> {
  const text = await passInput(path, '--torch-log');
  const graphs = parseTorchPassLog(text);
  if (graphs.length === 0) {
    throw new UsageError(
      `fsdp-sim pass: --torch-log '${path}' is not torch's pass log: it holds no overlap_scheduling / ` +
        "overlap_preserving_bucketer DEBUG lines naming a collective (torch's own lines: 'Overlapping collective', " +
        "'bucketed ... using timeline position', 'Scheduled node', ...)",
    );
  }
  return { graphs, cutShort: !text.endsWith('\n') };
}

/** Said of a log that stops mid-line, before any agreement figure. */
const CUT_SHORT =
  "it stops mid-line, so it looks cut short: collectives it never reached read as torch's 'not prefetched'";

/** torch's own figures of the pass (autobucketing only): what its log would print. */
function torchAccounting(s: Schedule) {
  const graphs = s.passStats;
  if (graphs === undefined) return {};
  const reasons = s.reasons.map((r) => ({
    collective: r.node.replace(/\.bw$/, ''),
    code: r.code,
    text: reasonText(r),
  }));
  return {
    torchProfile: s.torchProfile,
    potentialExposedMs: graphs.reduce((a, g) => a + g.potentialExposedMs, 0),
    scheduledExposedMs: graphs.reduce((a, g) => a + g.scheduledExposedMs, 0),
    graphs,
    reasons,
  };
}

/**
 * The agreement of each FX graph's pass with the log graph that names its collectives, and what says
 * the log is of another pass (warnings); a log of another graph is refused, naming the file.
 */
function agreementWith(path: string, s: Schedule, log: readonly TorchLogGraph[], cutShort: boolean) {
  const stats = s.passStats ?? [];
  const logs = matchLogGraphs(stats, log);
  if (stats.length && logs.every((l) => l === undefined))
    throw new UsageError(`fsdp-sim pass: --torch-log '${path}' names none of this FX graph's collectives`);
  const mismatches = stats.flatMap((p, k) => (logs[k] ? logMismatches(p, logs[k]) : []));
  const other = mismatches.find((m) => m.kind === 'other_graph');
  if (other) throw new UsageError(`fsdp-sim pass: --torch-log '${path}': ${logMismatchText(other)}`);
  const agreement = stats.flatMap((p, k) => (logs[k] ? [compareWithTorch(p, logs[k], s.reasons)] : []));
  return { agreement, warnings: [...(cutShort ? [CUT_SHORT] : []), ...mismatches.map(logMismatchText)] };
}

function printAgreement(io: Io, a: ReturnType<typeof wordedAgreement>): void {
  const pct = (x: number) => formatPercent(100 * x);
  const agreed = `buckets ${pct(a.bucketAgreement)} of pairs, prefetches ${pct(a.prefetchAgreement)}`;
  const after = `collectives after ${a.collectivesAfter.torch} (torch) vs ${a.collectivesAfter.fsdpSim} (fsdp-sim)`;
  io.out(`agreement with torch's log (${a.phase}): ${agreed}, ${after}`);
  for (const d of a.disagreements) io.out(`  ${d.what} ${d.collective}: torch: ${d.torch}; fsdp-sim: ${d.fsdpSim}`);
}
