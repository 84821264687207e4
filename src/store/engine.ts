// Engine adapter: the only place the store calls the pure pipeline (config → graph → backends →
// sim → metrics) and the trace/graph importers, turning their outputs into SideResults.

import type { SimConfig } from '../config';
import { compareBackends, runPipelineOnGraph } from '../pipeline';
import { computeMetrics, importTrace } from '../trace';
import { importFxGraph } from '../graph';
import { ImportError, err, ok, type Result } from '../errors';
import type { BackendName, Schedule } from '../backends/types';
import type { SimResult } from '../sim/types';
import type { TraceMetrics } from '../trace/metrics';
import type { MemoryCurve, TraceEvent } from '../trace/event';
import type { SideResult } from './types';

interface PipelineOut {
  readonly schedule: Schedule;
  readonly sim: SimResult;
  readonly metrics: TraceMetrics;
}

function clockLabel(cfg: SimConfig): string {
  return `cost model: ${cfg.hardware}`;
}

export function sideFromRun(run: PipelineOut, backend: string, clock: string): SideResult {
  return {
    title: backend,
    backend,
    source: 'sim',
    clock,
    events: run.sim.events,
    memory: run.sim.memory,
    metrics: run.metrics,
    worldSize: run.sim.worldSize,
    symmetric: run.sim.symmetric,
    schedule: run.schedule,
    mismatch: run.sim.mismatch,
  };
}

/** Simulate both backends of a config. Throws whatever the pipeline throws (caller shows it). */
export function simulateConfig(cfg: SimConfig): { a: SideResult; b: SideResult } {
  const { a, b } = compareBackends(cfg);
  return { a: sideFromRun(a, a.schedule.backend, clockLabel(cfg)), b: sideFromRun(b, b.schedule.backend, clockLabel(cfg)) };
}

/** Live-run events (one step from the virtual clock) as a side. */
export function sideFromEvents(
  events: readonly TraceEvent[], memory: readonly MemoryCurve[], title: string, backend: string,
  source: SideResult['source'], clock: string, worldSize?: number,
): SideResult {
  const ranks = new Set(events.map((e) => e.rank));
  return {
    title, backend, source, clock, events, memory,
    metrics: computeMetrics(events, memory),
    worldSize: worldSize ?? ranks.size,
    symmetric: false,
  };
}

/** Parse uploaded trace files (ours or Kineto; one per rank or merged) into a side. */
export function importTraceFiles(files: readonly { name: string; text: string }[]): Result<SideResult> {
  const jsons: unknown[] = [];
  for (const f of files) {
    try {
      jsons.push(JSON.parse(f.text));
    } catch (e) {
      return err(new ImportError(f.name, `${f.name} is not JSON: ${(e as Error).message}`));
    }
  }
  const r = importTrace(jsons.length === 1 ? jsons[0] : jsons);
  if (!r.ok) return err(new ImportError(files.map((f) => f.name).join(', '), `${files.map((f) => f.name).join(', ')}: ${r.error.message}`));
  const { events, memory, worldSize } = r.value;
  const title = files.length === 1 ? `import: ${files[0].name}` : `import: ${files.length} files`;
  return ok(sideFromEvents(events, memory ?? [], title, 'imported trace', 'import', 'imported trace', worldSize));
}

/** Parse an FX graph dump and run both configured backends on it. */
export function importFxFile(file: { name: string; text: string }, cfg: SimConfig): Result<{ a: SideResult; b: SideResult }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(file.text);
  } catch {
    parsed = file.text; // FX dumps may be plain text
  }
  const g = importFxGraph(parsed as never);
  if (!g.ok) return err(new ImportError(file.name, `${file.name}: ${g.error.message}`));
  const run = (backend: BackendName) => {
    const out = runPipelineOnGraph(g.value, cfg, backend);
    const side = sideFromRun(out, backend, `fx graph: ${file.name}`);
    return { ...side, title: `${backend} on ${file.name}` };
  };
  try {
    return ok({ a: run(cfg.backendA), b: run(cfg.backendB) });
  } catch (e) {
    return err(new ImportError(file.name, `${file.name}: ${(e as Error).message}`));
  }
}
