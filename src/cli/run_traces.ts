// `compare --trace DIR`: the Chrome traces of the compared runs, one merged file per backend or one
// file per rank, gzipped on request, written all-or-nothing into a fresh folder (trace_files.ts).
// Each file names its run (backend + the config's non-default fields) so the importer can refuse
// files of two different runs.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { configToQuery, type SimConfig } from '../config';
import type { PipelineResult } from '../pipeline';
import { EMIT_ALL_BELOW } from '../sim';
import { exportChromeTrace, waitOfGraph, type ExportOptions, chromeTraceJson } from '../trace';
import { rankFileName, staleRankFiles, writeTraceFiles, type TraceFile } from './trace_files';

/** The run's identity in its trace files: `aot_eager?model=llama3-8b&ranks=8`. */
const runId = (backend: string, cfg: SimConfig): string => `${backend}?${configToQuery(cfg)}`;

function exportOptions(r: PipelineResult, cfg: SimConfig): ExportOptions {
  const ranks = new Set(r.sim.events.map((e) => e.rank)).size;
  const label = `${r.backend}: ${cfg.model} on ${cfg.ranks} ranks, ${r.costLabel}`;
  // from EMIT_ALL_BELOW ranks up the simulator emits rank 0 only: say so in the file, not only in the help
  const note =
    ranks < r.sim.worldSize
      ? `${ranks} of ${r.sim.worldSize} ranks: the simulator emits rank 0 only from ${EMIT_ALL_BELOW} ranks up`
      : undefined;
  // every wait that blocked gets a flow arrow from its collective (Perfetto draws them)
  return {
    waitOf: waitOfGraph(r.schedule.graph),
    buckets: r.schedule.buckets,
    reduceDtype: cfg.reduceDtype,
    label,
    run: runId(r.backend, cfg),
    ...(note ? { note } : {}),
  };
}

/** Ranks that have events or a memory curve, in order: one per-rank file each. */
function ranksOf(r: PipelineResult): number[] {
  const ranks = new Set<number>();
  for (const e of r.sim.events) ranks.add(e.rank);
  for (const m of r.sim.memory) ranks.add(m.rank);
  return [...ranks].sort((a, b) => a - b);
}

/**
 * Every trace file of `runs` under `dir` (made lazily, one at a time, when written), plus the files
 * an earlier run left that would mix with these: rank files not written now, and the other form
 * (`.json` / `.json.gz`) of a merged file written now.
 */
function traceFilesOf(dir: string, perRank: boolean, runs: readonly PipelineResult[], cfg: SimConfig, gzip = false) {
  const ext = gzip ? '.trace.json.gz' : '.trace.json';
  const files: TraceFile[] = [];
  const stale: string[] = [];
  for (const r of runs) {
    const input = { events: r.sim.events, memory: r.sim.memory, worldSize: r.sim.worldSize };
    const opts = exportOptions(r, cfg);
    if (!perRank) {
      const path = join(dir, `${r.backend}${ext}`);
      files.push({ path, chunks: () => chromeTraceJson(exportChromeTrace(input, opts)) });
      const other = join(dir, `${r.backend}${gzip ? '.trace.json' : '.trace.json.gz'}`);
      if (existsSync(other)) stale.push(other);
      continue;
    }
    const sub = join(dir, r.backend);
    const mine = ranksOf(r).map((rank) => ({
      path: join(sub, rankFileName(rank, gzip)),
      chunks: () => chromeTraceJson(exportChromeTrace(input, { ...opts, rank })),
    }));
    for (const f of mine) files.push(f);
    for (const p of staleRankFiles(
      sub,
      mine.map((f) => f.path),
    ))
      stale.push(p);
  }
  return { files, stale };
}

export async function writeRunTraces(
  dir: string,
  perRank: boolean,
  runs: readonly PipelineResult[],
  cfg: SimConfig,
  gzip = false,
): Promise<void> {
  const { files, stale } = traceFilesOf(dir, perRank, runs, cfg, gzip);
  await writeTraceFiles(dir, files, stale);
}
