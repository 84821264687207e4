// `fsdp-sim pass`: run a backend's graph pass on a graph PyTorch produced (an FX dump, or a
// forward + backward pair) and report what it changed against aot_eager on the same graph.

import { readFileSync } from 'node:fs';
import { BACKEND_NAMES } from '../backends/types';
import type { Schedule } from '../backends/types';
import { BACKEND_PASSES } from '../backends';
import { HARDWARE_NAMES } from '../estimate';
import { countKinds, graphToString, importFxGraph } from '../graph';
import { runPipelineOnGraph } from '../pipeline';
import { describeMismatch, mismatchReport } from '../sim';
import { CONFIG_OPTIONS, GRAPH_SHAPE_FLAGS, UsageError, configFlagHelp, configFromFlags, parseFlags } from './args';
import { parseBackends } from './compare';
import type { Io } from './io';

export const PASS_OPTIONS = {
  ...CONFIG_OPTIONS,
  'fx-graph': { type: 'string', multiple: true },
  backend: { type: 'string' },
  json: { type: 'boolean' },
  'print-graph': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const PASS_USAGE = [
  `usage: fsdp-sim pass --fx-graph FILE [FILE2] [--backend NAME] [--hardware ${HARDWARE_NAMES.join('|')}] [--json]`,
  '',
  'Import a torch FX graph dump (format: reference/fx_graph_dump.md; FILE2 = the backward graph),',
  'run a backend on it and compare with aot_eager on the same graph.',
  `  --backend NAME       one of [${BACKEND_NAMES.join(', ')}] (default aot_eager_autobucketing)`,
  '  --json               print {collectivesBefore, collectivesAfter, buckets, exposedMsBefore, exposedMsAfter,',
  '                       peakBytesBefore, peakBytesAfter}',
  '  --print-graph        print the graph in the order the backend scheduled it, one line per node (as FX prints)',
  '  --set PATH=VALUE     any other config field (repeatable)',
  '                       (the dump fixes the graph: model, ranks, batch, sequence, AC and dtypes do not apply)',
  ...configFlagHelp(GRAPH_SHAPE_FLAGS),
].join('\n');

const countCollectives = (s: Schedule) => {
  const k = countKinds(s.graph);
  return (k.all_gather ?? 0) + (k.reduce_scatter ?? 0);
};

export async function passCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags('pass', argv, PASS_OPTIONS, true);
  if (values.help) {
    io.out(PASS_USAGE);
    return 0;
  }
  const files = [...(values['fx-graph'] ?? []), ...positionals];
  if (files.length === 0)
    throw new UsageError(
      'fsdp-sim pass: --fx-graph FILE is required (an FX graph dump; a second FILE adds the backward graph)',
    );
  if (files.length > 2)
    throw new UsageError(`fsdp-sim pass: --fx-graph takes one or two files (forward, backward), got ${files.length}`);
  const [backend] = parseBackends('pass', values.backend, ['aot_eager_autobucketing']);
  if (values.backend?.includes(','))
    throw new UsageError(`fsdp-sim pass: --backend takes one name, got '${values.backend}'`);
  const shape = GRAPH_SHAPE_FLAGS.filter((f) => (values as Record<string, unknown>)[f] !== undefined);
  if (shape.length)
    throw new UsageError(
      `fsdp-sim pass: --${shape[0]} does not apply: the FX dump fixes the graph (its ranks, shapes and dtypes)`,
    );
  const cfg = configFromFlags('pass', values);
  const dumps = files.map((f) => {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (e) {
      throw new UsageError(
        `fsdp-sim pass: --fx-graph cannot read '${f}': ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new UsageError(`fsdp-sim pass: --fx-graph '${f}' is not JSON: ${(e as Error).message}`);
    }
  });
  const imported = importFxGraph(dumps.length === 1 ? dumps[0] : dumps);
  if (!imported.ok) {
    io.err(`fsdp-sim pass: ${files.join(', ')}: ${imported.error.message}`);
    return 1;
  }
  const before = runPipelineOnGraph(imported.value, cfg, 'aot_eager');
  const after = runPipelineOnGraph(imported.value, cfg, backend);
  const hang = before.sim.mismatch ?? after.sim.mismatch;
  if (hang) {
    // a simulated hang has no step, exposure or peak to report: an error in every output
    if (values.json) io.out(JSON.stringify({ error: mismatchReport(hang) }));
    io.err(`fsdp-sim pass: ${after.sim.mismatch ? backend : 'aot_eager'}: ${describeMismatch(hang)}`);
    return 1;
  }
  const out = {
    collectivesBefore: countCollectives(before.schedule),
    collectivesAfter: countCollectives(after.schedule),
    buckets: after.schedule.buckets.map((b) => [...b.members]),
    exposedMsBefore: before.metrics.exposedCommUs / 1000,
    exposedMsAfter: after.metrics.exposedCommUs / 1000,
    peakBytesBefore: before.metrics.peakMemoryBytes,
    peakBytesAfter: after.metrics.peakMemoryBytes,
  };
  if (values.json) {
    io.out(JSON.stringify(out));
    return 0;
  }
  io.out(`${backend} on ${files.join(' + ')} (${imported.value.meta.worldSize} ranks, ${after.costLabel})`);
  io.out(`passes:        ${BACKEND_PASSES[backend].join(' → ')}`);
  io.out(`collectives:   ${out.collectivesBefore} → ${out.collectivesAfter} (${out.buckets.length} buckets)`);
  io.out(`exposed comm:  ${out.exposedMsBefore.toFixed(3)} ms → ${out.exposedMsAfter.toFixed(3)} ms`);
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  io.out(`peak memory:   ${mib(out.peakBytesBefore)} → ${mib(out.peakBytesAfter)}`);
  for (const [i, b] of out.buckets.entries()) io.out(`  bucket ${i}: ${b.join(', ')}`);
  if (values['print-graph']) io.out(graphToString(after.schedule.graph));
  return 0;
}
