// `fsdp-sim compare`: simulate one config under several backends (default aot_eager vs
// aot_eager_autobucketing) and print the metrics table, JSON, and optionally Chrome traces.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_NAMES, type BackendName } from '../backends/types';
import { oneOfMessage } from '../errors';
import { activationCheckpointingOf, describeHbmFit, hbmFit, stepConfigOf } from '../config';
import { buildStepGraph } from '../graph';
import { runPipelineOnGraph } from '../pipeline';
import { exportChromeTrace, exportChromeTraces } from '../trace/chrome_export';
import { CONFIG_OPTIONS, UsageError, configFlagHelp, configFromFlags, parseFlags } from './args';
import { formatTable, rowOf } from './format';
import type { Io } from './io';

export const COMPARE_OPTIONS = {
  ...CONFIG_OPTIONS,
  backends: { type: 'string' },
  ac: { type: 'string' },
  trace: { type: 'string' },
  'per-rank': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const COMPARE_USAGE = [
  'usage: fsdp-sim compare [--model NAME] [--ranks N] [--hardware h100|h200|a100] [--backends A,B] [--ac none|selective|full] [--trace DIR] [--json]',
  '',
  'Simulate one SimpleFSDP training step under each backend and compare them.',
  '  --backends A,B       backends to run, comma-separated (default: aot_eager,aot_eager_autobucketing)',
  '  --ac MODE            activation checkpointing, none|selective|full (torchtitan activation_checkpoint.mode; default:',
  '                       the preset\'s train config: full for llama3-70b/405b, selective (op) for llama3-8b, else none)',
  `                       one of [${BACKEND_NAMES.join(', ')}]`,
  '  --trace DIR          write DIR/<backend>.trace.json (Chrome trace, all ranks; open in Perfetto or HTA)',
  '  --per-rank           with --trace: one file per rank, DIR/<backend>/rank<r>.trace.json (as torch.profiler writes)',
  '  --json               print {"results":[{backend, stepTimeMs, exposedCommMs, overlapPct, peakMemoryBytes, collectives}]}',
  '  --set PATH=VALUE     any other config field, e.g. --set autobucketing.max_in_flight_gb=2 (repeatable)',
  ...configFlagHelp(),
].join('\n');

export function parseBackends(command: string, text: string | undefined, fallback: readonly BackendName[]): BackendName[] {
  if (text === undefined) return [...fallback];
  const names = text.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!(BACKEND_NAMES as readonly string[]).includes(n)) throw new UsageError(`fsdp-sim ${command}: ${oneOfMessage('--backends entries', BACKEND_NAMES, n)}`);
  }
  return names as BackendName[];
}

export async function compareCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseFlags('compare', argv, COMPARE_OPTIONS);
  if (values.help) {
    io.out(COMPARE_USAGE);
    return 0;
  }
  // --ac X is --set activationCheckpointing=X (validated with the config, error names the field)
  const sets = [...(((values as Record<string, unknown>).set as string[] | undefined) ?? []), ...(values.ac !== undefined ? [`activationCheckpointing=${values.ac}`] : [])];
  const cfg = configFromFlags('compare', { ...values, set: sets });
  const backends = parseBackends('compare', values.backends, [cfg.backendA, cfg.backendB]);
  const ac = activationCheckpointingOf(cfg);
  const graph = buildStepGraph(stepConfigOf(cfg));
  const runs = backends.map((b) => runPipelineOnGraph(graph, cfg, b));
  if (values.trace !== undefined) {
    mkdirSync(values.trace, { recursive: true });
    for (const r of runs) {
      const input = { events: r.sim.events, memory: r.sim.memory, worldSize: r.sim.worldSize };
      const opts = { buckets: r.schedule.buckets, reduceDtype: cfg.reduceDtype, label: `${r.backend}: ${cfg.model} on ${cfg.ranks} ranks, ${r.costLabel}` };
      if (values['per-rank']) {
        const dir = join(values.trace, r.backend);
        mkdirSync(dir, { recursive: true });
        for (const t of exportChromeTraces(input, opts)) writeFileSync(join(dir, `rank${t.distributedInfo.rank}.trace.json`), JSON.stringify(t));
      } else {
        writeFileSync(join(values.trace, `${r.backend}.trace.json`), JSON.stringify(exportChromeTrace(input, opts)));
      }
    }
  }
  const rows = runs.map((r) => rowOf(r.backend, r.metrics));
  if (values.json) {
    io.out(JSON.stringify({ results: rows }));
    return 0;
  }
  const mismatch = runs.filter((r) => r.sim.mismatch).map((r) => `${r.backend}: ranks disagree on collective #${r.sim.mismatch!.seq} (${r.sim.mismatch!.ops.join(' vs ')})`);
  io.out(`${cfg.model} on ${cfg.ranks} × ${cfg.hardware}, activation checkpointing ${ac} (${runs[0]?.costLabel ?? ''})`);
  io.out(formatTable(rows, cfg.hardware));
  for (const m of mismatch) io.out(`warning: ${m}`);
  for (const r of rows) {
    const fit = hbmFit(r.peakMemoryBytes, cfg.hardware);
    if (!fit.fits) io.out(`warning: ${r.backend}: ${describeHbmFit(fit)}: the step does not fit${ac !== 'full' ? ' (try --ac full)' : ''}`);
  }
  if (values.trace !== undefined) {
    const where = (b: string) => join(values.trace!, values['per-rank'] ? `${b}/rank*.trace.json` : `${b}.trace.json`);
    io.out(`traces: ${runs.map((r) => where(r.backend)).join(', ')}`);
  }
  return 0;
}
