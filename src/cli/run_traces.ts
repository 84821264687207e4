// `compare --trace DIR`: the Chrome traces of the compared runs, one merged file per backend or one
// file per rank, written all-or-nothing (trace_files.ts). Each file names its run (backend + the
// config's non-default fields) so the importer can refuse files of two different runs.

import { join } from 'node:path';
import { configToQuery, type SimConfig } from '../config';
import type { PipelineResult } from '../pipeline';
import { EMIT_ALL_BELOW } from '../sim';
import { exportChromeTrace, exportChromeTraces, type ExportOptions } from '../trace/chrome_export';
import { staleRankFiles, writeTraceFiles, type TraceFile } from './trace_files';

/** The run's identity in its trace files: `aot_eager?model=llama3-8b&ranks=8`. */
export const runId = (backend: string, cfg: SimConfig): string => `${backend}?${configToQuery(cfg)}`;

function exportOptions(r: PipelineResult, cfg: SimConfig): ExportOptions {
  const ranks = new Set(r.sim.events.map((e) => e.rank)).size;
  const label = `${r.backend}: ${cfg.model} on ${cfg.ranks} ranks, ${r.costLabel}`;
  // from EMIT_ALL_BELOW ranks up the simulator emits rank 0 only: say so in the file, not only in the help
  const note =
    ranks < r.sim.worldSize
      ? `${ranks} of ${r.sim.worldSize} ranks: the simulator emits rank 0 only from ${EMIT_ALL_BELOW} ranks up`
      : undefined;
  return {
    buckets: r.schedule.buckets,
    reduceDtype: cfg.reduceDtype,
    label,
    run: runId(r.backend, cfg),
    ...(note ? { note } : {}),
  };
}

/** Every trace file of `runs` under `dir`, plus the stale rank files to remove (per-rank mode). */
export function traceFilesOf(dir: string, perRank: boolean, runs: readonly PipelineResult[], cfg: SimConfig) {
  const files: TraceFile[] = [];
  const stale: string[] = [];
  for (const r of runs) {
    const input = { events: r.sim.events, memory: r.sim.memory, worldSize: r.sim.worldSize };
    const opts = exportOptions(r, cfg);
    if (!perRank) {
      files.push({ path: join(dir, `${r.backend}.trace.json`), text: JSON.stringify(exportChromeTrace(input, opts)) });
      continue;
    }
    const sub = join(dir, r.backend);
    const mine = exportChromeTraces(input, opts).map((t) => ({
      path: join(sub, `rank${t.distributedInfo.rank}.trace.json`),
      text: JSON.stringify(t),
    }));
    files.push(...mine);
    stale.push(
      ...staleRankFiles(
        sub,
        mine.map((f) => f.path),
      ),
    );
  }
  return { files, stale };
}

export function writeRunTraces(dir: string, perRank: boolean, runs: readonly PipelineResult[], cfg: SimConfig): void {
  const { files, stale } = traceFilesOf(dir, perRank, runs, cfg);
  writeTraceFiles(files, stale);
}
