// Engine adapter: the only place the store calls the pure pipeline (config → graph → backends →
// sim → metrics) and the trace/graph importers, turning their outputs into SideResults.

import { describeMesh, meshOfParallelism, type SimConfig } from '../config';
import { compareBackends, runPipelineOnGraph, stepFigures } from '../pipeline';
import { computeMetrics, importTrace } from '../trace';
import { importFxGraph } from '../graph';
import { ImportError, err, ok, type Result } from '../errors';
import type { BackendName } from '../backends';
import { compareWithTorch, matchLogGraphs, parseTorchPassLog, type TorchLogGraph } from '../backends';
import type { PipelineResult } from '../pipeline';
import type { MemoryCurve, TraceEvent } from '../trace';
import type { RunKey, SideResult } from './store_types';

/** A pipeline run as a side; `clockPrefix` says what timed it ('cost model', 'fx graph, cost model'). */
export function sideFromRun(run: PipelineResult, clockPrefix = 'cost model'): SideResult {
  const { peakAllocatedBytes, peakReservedBytes } = stepFigures(run);
  return {
    title: run.backend,
    backend: run.backend,
    source: 'sim',
    clock: `${clockPrefix}: ${run.costLabel}`,
    events: run.sim.events,
    memory: run.sim.memory,
    metrics: run.metrics,
    worldSize: run.sim.worldSize,
    symmetric: run.sim.symmetric,
    schedule: run.schedule,
    allocator: { peakAllocatedBytes, peakReservedBytes }, // what HBM-fit checks and torchtitan's "memory:" use
    mismatch: run.sim.mismatch,
  };
}

/** Simulate both backends of a config. Throws whatever the pipeline throws (caller shows it). */
export function simulateConfig(cfg: SimConfig): { a: SideResult; b: SideResult } {
  // every emitted rank's events (the timeline says "showing 8 of N ranks" from them); a symmetric
  // side's copies cost one block in the worker's reply (side_codec.ts)
  const { a, b } = compareBackends(cfg);
  const run = simRunKey(cfg);
  return { a: { ...sideFromRun(a), run }, b: { ...sideFromRun(b), run } };
}

/** What a simulated side ran: the config's model and mesh on the cost model. */
function simRunKey(cfg: SimConfig): RunKey {
  return { model: cfg.model, mesh: describeMesh(meshOfParallelism(cfg.ranks, cfg.parallelism)), kernels: 'cost model' };
}

/** Live-run events (one step from the virtual clock) as a side. */
export function sideFromEvents(
  events: readonly TraceEvent[],
  memory: readonly MemoryCurve[],
  title: string,
  backend: string,
  source: SideResult['source'],
  clock: string,
  worldSize?: number,
): SideResult {
  const ranks = new Set(events.map((e) => e.rank));
  return {
    title,
    backend,
    source,
    clock,
    events,
    memory,
    metrics: computeMetrics(events, memory),
    worldSize: worldSize ?? ranks.size,
    symmetric: false,
  };
}

/**
 * Parse uploaded trace files (ours or Kineto; one per rank or merged) into a side: JSON text, or
 * a trace already read (`json`: trace/trace_stream.ts streams a file into one).
 */
export function importTraceFiles(
  files: readonly ({ name: string; text: string } | { name: string; json: unknown })[],
): Result<SideResult> {
  const jsons: unknown[] = [];
  for (const f of files) {
    if ('json' in f) {
      jsons.push(f.json);
      continue;
    }
    try {
      jsons.push(JSON.parse(f.text));
    } catch (e) {
      return err(new ImportError(f.name, `${f.name} is not JSON: ${(e as Error).message}`));
    }
  }
  const r = importTrace(jsons.length === 1 ? jsons[0] : jsons);
  const names = files.map((f) => f.name).join(', ');
  if (!r.ok) return err(new ImportError(names, `${names}: ${r.error.message}`));
  const { events, memory, worldSize, warnings } = r.value;
  const title = files.length === 1 ? `import: ${files[0].name}` : `import: ${files.length} files`;
  const side = sideFromEvents(events, memory ?? [], title, 'imported trace', 'import', 'imported trace', worldSize);
  // the importer names files by position: say their names
  const fileName = (m: string, i?: string) => files[Number(i ?? 0)]?.name ?? m;
  const named = warnings.map((w) => w.replace(/^file\[(\d+)\]|^trace\b/, fileName));
  return ok(named.length ? { ...side, warnings: named } : side);
}

/**
 * Parse FX graph dump(s) — one, or forward + backward — and run both configured backends on the
 * step. A text file among them that holds torch's DEBUG log of the pass is read as that log: each
 * side then carries how far its decisions agree with torch's.
 */
export function importFxFiles(
  files: readonly { name: string; text: string }[],
  cfg: SimConfig,
): Result<{ a: SideResult; b: SideResult }> {
  const dumps: unknown[] = [];
  const logs: TorchLogGraph[] = [];
  const dumpNames: string[] = [];
  for (const f of files) {
    try {
      dumps.push(JSON.parse(f.text));
      dumpNames.push(f.name);
    } catch (e) {
      const log = parseTorchPassLog(f.text);
      if (log.length === 0)
        return err(
          new ImportError(
            f.name,
            `${f.name} is neither an FX graph dump (JSON: ${(e as Error).message}) nor a torch log of the overlap ` +
              `pass (no overlap_scheduling / overlap_preserving_bucketer lines naming a collective)`,
          ),
        );
      logs.push(...log);
    }
  }
  const names = dumpNames.join(' + ');
  if (dumps.length === 0) {
    const picked = files.map((f) => f.name).join(', ');
    return err(
      new ImportError(
        picked,
        `${picked}: a torch log needs its FX graph dump(s) alongside: pick the dump(s) and the log together`,
      ),
    );
  }
  // forward before backward, whatever order the files were picked in
  const rank = (d: unknown) => ((d as { graph?: unknown })?.graph === 'backward' ? 1 : 0);
  dumps.sort((x, y) => rank(x) - rank(y));
  const g = importFxGraph(dumps.length === 1 ? dumps[0] : dumps);
  if (!g.ok) return err(new ImportError(names, `${names}: ${g.error.message}`));
  try {
    const run = (backend: BackendName): SideResult => {
      const out = runPipelineOnGraph(g.value, cfg, backend);
      const side = { ...sideFromRun(out, 'fx graph, cost model'), title: `${backend} on ${names}` };
      const stats = out.schedule.passStats;
      if (logs.length === 0 || stats === undefined) return side;
      const matched = matchLogGraphs(stats, logs);
      return {
        ...side,
        torchAgreement: stats.flatMap((p, k) =>
          matched[k] ? [compareWithTorch(p, matched[k], out.schedule.reasons)] : [],
        ),
      };
    };
    return ok({ a: run(cfg.backendA), b: run(cfg.backendB) });
  } catch (e) {
    return err(new ImportError(names, `${names}: ${(e as Error).message}`));
  }
}
