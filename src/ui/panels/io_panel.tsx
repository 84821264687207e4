// Export and import: Chrome-trace JSON per side, a PNG of the timelines, and imports of Kineto /
// our own traces (one file per rank or merged) and FX graph dumps. A bad file gives a message
// naming what is wrong; the page stays as it was.

import { type RefObject, useRef, useState } from 'react';
import { appStore, importFxFiles, importTraceFiles, type Side, type SideResult } from '../../store';
import { useApp } from '../use_app';
import {
  exportChromeTrace,
  importKeep,
  keptBudget,
  MAX_KEPT_EVENTS,
  parseTraceFile,
  readTraceStream,
  waitOfGraph,
} from '../../trace';
import { scaleLinear } from 'd3';
import { clockWords } from '../clocks';
import { downloadBlob, downloadJson, timelinesPng } from '../download';
import { fmtTick, fmtUs } from '../ui_format';
import { EXPOSED_ENTRY, PEER_WAIT_ENTRY, legendFor, paletteFor } from '../palette';
import { GUTTER_PX } from '../timeline/draw';
import { useResolvedTheme } from '../theme';
import { setInlineNotice, Toast, useInlineNotice } from './banners';

async function readFiles(list: FileList | null): Promise<{ name: string; text: string }[]> {
  return Promise.all([...(list ?? [])].map(async (f) => ({ name: f.name, text: await f.text() })));
}

/**
 * Trace files streamed (trace_stream.ts): `.json.gz` (torch.profiler's default) gunzipped as read,
 * each event kept as the importer reads it, so no file is held whole.
 */
async function readTraceFiles(list: FileList | null): Promise<{ name: string; json: unknown }[]> {
  const budget = keptBudget(MAX_KEPT_EVENTS, 'import fewer or shorter traces');
  const files = [...(list ?? [])];
  const read = async (f: File, i: number) => ({
    name: f.name,
    // parsed as soon as read: only its trace events stay
    json: parseTraceFile(await readTraceStream(f.name, f.stream(), { keep: importKeep, budget }), i, files.length),
  });
  return Promise.all(files.map(read));
}

const FX_LOG_HINT =
  "Pick torch's DEBUG log of the pass (overlap_scheduling, overlap_preserving_bucketer) with the " +
  "dump(s) to compare B's decisions with torch's";

function safeName(s: string): string {
  return s.replace(/[^a-z0-9_.-]+/gi, '_').slice(0, 60);
}

/** 'on 2 ranks (of a world of 128)': the ranks the files hold, and the job's size when the trace says more. */
function rankWords(r: SideResult): string {
  const held = new Set(r.events.map((e) => e.rank)).size;
  const n = (k: number) => `${k} rank${k === 1 ? '' : 's'}`;
  return r.worldSize > held ? `on ${n(held)} (of a world of ${r.worldSize}, as the trace says)` : `on ${n(held)}`;
}

type Notify = (kind: 'error' | 'info', text: string) => void;
type Sides = ReturnType<typeof appStore.getState>['sides'];

/** One side's events as a Chrome trace (with bucket args and collective → wait flows). */
function exportSideTrace(side: Side, r: SideResult | null | undefined, notify: Notify): void {
  if (!r) return;
  try {
    const trace = exportChromeTrace(
      { events: r.events, memory: r.memory, worldSize: r.worldSize },
      {
        buckets: r.schedule?.buckets,
        label: r.title,
        ...(r.schedule ? { waitOf: waitOfGraph(r.schedule.graph) } : {}), // collective → wait flows
      },
    );
    downloadJson(trace, `fsdp-sim_${side}_${safeName(r.title)}.trace.json`);
  } catch (e) {
    notify('error', `Export failed: ${(e as Error).message}`);
  }
}

/** Both timeline canvases as one PNG, with titles, the time axis of the shared window and a legend. */
async function exportTimelinesPng(sides: Sides, theme: ReturnType<typeof useResolvedTheme>, notify: Notify) {
  const canvases = (['a', 'b'] as const).flatMap((side) => {
    const c = document.querySelector<HTMLCanvasElement>(`[data-testid="timeline-${side}"] canvas`);
    const r = sides[side];
    if (!c || !r) return [];
    const title = `${side.toUpperCase()} · ${r.title} · step ${fmtUs(r.metrics.stepTimeUs)} · ${clockWords(r)}`;
    return [{ title, canvas: c }];
  });
  if (!canvases.length) return;
  try {
    const p = paletteFor(theme);
    const w = appStore.getState().window;
    const cssW = canvases[0].canvas.clientWidth;
    const x = scaleLinear()
      .domain([w.startUs, w.endUs])
      .range([GUTTER_PX, cssW - 8]);
    const tv = x.ticks(Math.max(2, Math.floor((cssW - GUTTER_PX) / 110)));
    const ticks = tv.map((t) => ({ xPx: x(t), label: fmtTick(t, tv.length > 1 ? tv[1] - tv[0] : undefined) }));
    const kinds = new Set([sides.a, sides.b].flatMap((r) => r?.events.map((e) => e.kind) ?? []));
    const legend = [...legendFor(kinds), PEER_WAIT_ENTRY, EXPOSED_ENTRY].map((l) => ({
      label: l.label,
      color: p[l.color],
    }));
    const muted = getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || p.text;
    const png = await timelinesPng(canvases, { background: p.background, text: p.text, muted, ticks, legend });
    downloadBlob(png, 'fsdp-sim_timelines.png');
  } catch (e) {
    notify('error', (e as Error).message);
  }
}

/** Trace files (one per rank, or merged) into one side; every failure ends in a message. */
async function importTracesInto(side: Side, list: FileList | null, notify: Notify): Promise<void> {
  // unreadable or corrupt files, and anything the import throws
  try {
    const files = await readTraceFiles(list);
    if (!files.length) return;
    const r = importTraceFiles(files);
    if (!r.ok) notify('error', `Import failed: ${r.error.message}`);
    else {
      appStore.getState().setSide(side, r.value);
      const notes = r.value.warnings?.length ? ` Note: ${r.value.warnings.join('; ')}.` : '';
      const names = files.map((f) => f.name).join(', ');
      const what = `${r.value.events.length} events ${rankWords(r.value)}`;
      notify('info', `Imported ${names} into ${side.toUpperCase()}: ${what}.${notes}`);
    }
  } catch (e) {
    notify('error', `Import failed: ${(e as Error).message}`);
  }
}

/** FX graph dumps (and torch's pass log): both backends run on the graph, one per side. */
async function importFxInto(list: FileList | null, notify: Notify): Promise<void> {
  try {
    const files = await readFiles(list);
    if (!files.length) return;
    const r = importFxFiles(files, appStore.getState().config);
    if (!r.ok) notify('error', `Import failed: ${r.error.message}`);
    else {
      const st = appStore.getState();
      const fxGraph = r.value.a.title.replace(/^\S+ on /, ''); // the dumps' names (a pass log is not the model)
      st.setSide('a', { ...r.value.a, fxGraph });
      st.setSide('b', { ...r.value.b, fxGraph });
      notify(
        'info',
        `Ran both backends on the FX graph ${fxGraph}: the Config panel shows it as the model. ` +
          'A reload drops it (the URL holds only the config).',
      );
    }
  } catch (e) {
    notify('error', `Import failed: ${(e as Error).message}`);
  }
}

/** Runs an import, then empties its file input so that picking the same file again imports it again. */
async function thenClear(input: RefObject<HTMLInputElement | null>, work: Promise<void>): Promise<void> {
  try {
    await work;
  } finally {
    if (input.current) input.current.value = '';
  }
}

export function IoPanel() {
  const sides = useApp((s) => s.sides);
  const theme = useResolvedTheme();
  const [importSide, setImportSide] = useState<Side>('a');
  const traceInput = useRef<HTMLInputElement>(null);
  const fxInput = useRef<HTMLInputElement>(null);
  const notify: Notify = (kind, text) => setInlineNotice({ kind, text }); // shown here, not on top
  const notice = useInlineNotice();

  const exportTrace = (side: Side) => exportSideTrace(side, sides[side], notify);
  const exportPng = () => exportTimelinesPng(sides, theme, notify);
  const onTraceFiles = (list: FileList | null) => thenClear(traceInput, importTracesInto(importSide, list, notify));
  const onFxFile = (list: FileList | null) => thenClear(fxInput, importFxInto(list, notify));

  return (
    <section className="panel io" data-testid="io">
      <h2>Export / import</h2>
      {notice && <Toast key={notice.text} kind={notice.kind} text={notice.text} inline />}
      <div className="row buttons">
        <button type="button" onClick={() => exportTrace('a')} disabled={!sides.a} data-testid="export-a">
          Trace A (.json)
        </button>
        <button type="button" onClick={() => exportTrace('b')} disabled={!sides.b} data-testid="export-b">
          Trace B (.json)
        </button>
        <button type="button" onClick={exportPng} data-testid="export-png">
          Timelines (.png)
        </button>
      </div>
      <div className="row">
        <label>
          trace into{' '}
          <select value={importSide} onChange={(e) => setImportSide(e.target.value as Side)} data-testid="import-side">
            <option value="a">A</option>
            <option value="b">B</option>
          </select>
        </label>
        <label className="file">
          Kineto / Chrome trace(s)…
          <input
            ref={traceInput}
            type="file"
            accept=".json,.gz,application/json,application/gzip"
            multiple
            data-testid="import-trace"
            onChange={(e) => void onTraceFiles(e.target.files)}
          />
        </label>
      </div>
      <div className="row">
        <label className="file" title={FX_LOG_HINT}>
          FX graph dump(s), forward [+ backward] [+ torch's pass log]…
          <input
            ref={fxInput}
            type="file"
            accept=".json,.log,.txt"
            multiple
            data-testid="import-fx"
            onChange={(e) => void onFxFile(e.target.files)}
          />
        </label>
        <button
          type="button"
          onClick={() => void appStore.getState().resimulate(appStore.getState().config)}
          data-testid="resimulate"
        >
          Back to simulation
        </button>
      </div>
    </section>
  );
}
