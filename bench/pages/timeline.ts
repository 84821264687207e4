// Bench page 4: frame time of the UI's canvas timeline renderer (src/ui/timeline: buildColumns +
// drawTimeline, culled, columnar) while zooming and panning a synthetic trace, against a naive draw of
// the same events on the same canvas (every rectangle, straight from the event objects, no culling,
// no sub-pixel merging; labels by the same width rule). A frame = draw + a 1-pixel getImageData,
// which forces the canvas to rasterise, so deferred drawing is counted.
import type { TraceEvent } from '../../src/trace/event';
import { buildColumns } from '../../src/ui/timeline/columns';
import { drawTimeline, GUTTER_PX, layoutLanes, MIN_LABEL_PX } from '../../src/ui/timeline/draw';
import { panWindow, TimeScale, zoomWindow, type TimeWindow } from '../../src/trace/time_scale';
import { paletteFor } from '../../src/ui/palette';
import { percentile, ready, seededFloats } from './bench_page';
import { midpointMedian } from '../../src/util';

export interface TimelinePageOptions {
  readonly sizes: readonly number[]; // events per trace
  readonly ranks: number; // lanes = ranks × 2 streams
  readonly widthPx: number;
  readonly naiveMaxFrames: number; // the naive draw of 1M events is slow: cap its frames…
  readonly naiveBudgetMs: number; // …and its time (at least 3 frames)
}

export interface TimelineRecord {
  readonly events: number;
  readonly lanes: number;
  readonly frames: number;
  readonly buildMs: number; // buildColumns, once per trace
  readonly oursMedianMs: number;
  readonly oursP95Ms: number;
  readonly oursMaxMs: number;
  readonly naiveFrames: number;
  readonly naiveMedianMs: number;
  readonly naiveP95Ms: number;
  readonly rectsMedian: number; // rectangles ours filled per frame
  readonly oursTimesMs: readonly number[]; // per frame, in transform order
  readonly rects: readonly number[];
}

/** A synthetic step trace: per rank a compute stream of kernels and waits, a comm stream of collectives. */
function syntheticTrace(events: number, ranks: number): TraceEvent[] {
  const perLane = Math.ceil(events / (ranks * 2));
  const r = seededFloats(perLane * 2, 7 + events);
  const out: TraceEvent[] = [];
  for (let rank = 0; rank < ranks; rank++) {
    for (const stream of ['compute', 'comm:dp'] as const) {
      let t = rank * 0.5;
      for (let i = 0; i < perLane && out.length < events; i++) {
        const dur = 2 + 40 * Math.abs(r[2 * i]); // µs
        const gap = 0.5 + 4 * Math.abs(r[2 * i + 1]);
        const kind =
          stream === 'compute' ? (i % 9 === 8 ? 'wait' : 'compute') : i % 2 ? 'reduce_scatter' : 'all_gather';
        out.push({
          rank,
          stream,
          name: `layers.${i % 32}.${kind}.${i}`,
          kind,
          start: t,
          dur,
          bucketId: stream === 'compute' ? undefined : i >> 3,
        });
        t += dur + gap;
      }
    }
  }
  return out;
}

/** Zoom in ×0.8 per step (20 steps, to ~1 % of the span), pan right 20 steps, zoom back out 20 steps (61 frames). */
function transforms(endUs: number): TimeWindow[] {
  const out: TimeWindow[] = [{ startUs: 0, endUs }];
  let w = out[0];
  for (let i = 0; i < 20; i++) out.push((w = zoomWindow(w, 0.8, endUs * 0.4, endUs)));
  for (let i = 0; i < 20; i++) out.push((w = panWindow(w, (w.endUs - w.startUs) * 0.15, endUs)));
  for (let i = 0; i < 20; i++) out.push((w = zoomWindow(w, 1 / 0.8, (w.startUs + w.endUs) / 2, endUs)));
  return out;
}

function naiveDraw(
  ctx: CanvasRenderingContext2D,
  events: readonly TraceEvent[],
  laneTop: (e: TraceEvent) => number,
  laneH: number,
  scale: TimeScale,
  colors: Record<string, string>,
  textColor: string,
  w: number,
  h: number,
): void {
  ctx.clearRect(0, 0, w, h);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (const e of events) {
    ctx.fillStyle = colors[e.kind];
    ctx.fillRect(scale.timeToPx(e.start), laneTop(e), scale.durToPx(e.dur), laneH);
  }
  ctx.fillStyle = textColor;
  for (const e of events) {
    const bw = scale.durToPx(e.dur);
    if (bw >= MIN_LABEL_PX) ctx.fillText(e.name, scale.timeToPx(e.start) + 3, laneTop(e) + laneH / 2, bw - 6);
  }
}

async function run(o: TimelinePageOptions): Promise<TimelineRecord[]> {
  const canvas = document.getElementById('c') as HTMLCanvasElement;
  const palette = paletteFor('light');
  const out: TimelineRecord[] = [];
  for (const n of o.sizes) {
    const events = syntheticTrace(n, o.ranks);
    const b0 = performance.now();
    const cols = buildColumns(events);
    const buildMs = performance.now() - b0;
    const layout = layoutLanes(cols);
    const w = o.widthPx;
    const h = Math.ceil(layout.heightPx);
    canvas.width = w;
    canvas.height = h;
    const ctx = canvas.getContext('2d')!;
    const base = new TimeScale({ startUs: 0, endUs: cols.endUs }, GUTTER_PX, w - GUTTER_PX - 8);
    const frameOf = (draw: () => void): number => {
      const t0 = performance.now();
      draw();
      ctx.getImageData(0, 0, 1, 1);
      return performance.now() - t0;
    };
    const wins = transforms(cols.endUs);
    const ours: number[] = [];
    const rects: number[] = [];
    frameOf(() =>
      drawTimeline({
        ctx,
        cols,
        layout,
        scale: base,
        palette,
        names: (i) => events[i].name,
        highlight: { bucketId: -1, eventIndex: -1 },
        cssWidthPx: w,
        cssHeightPx: h,
      }),
    ); // warm-up
    for (const win of wins) {
      const scale = base.withWindow(win);
      ours.push(
        frameOf(() =>
          rects.push(
            drawTimeline({
              ctx,
              cols,
              layout,
              scale,
              palette,
              names: (i) => events[i].name,
              highlight: { bucketId: -1, eventIndex: -1 },
              cssWidthPx: w,
              cssHeightPx: h,
            }),
          ),
        ),
      );
    }
    const laneIdx = new Map(cols.lanes.map((l, i) => [`${l.rank}|${l.stream}`, i]));
    const laneTop = (e: TraceEvent) => layout.top[laneIdx.get(`${e.rank}|${e.stream}`) ?? 0];
    const colors = {
      compute: palette.compute,
      all_gather: palette.all_gather,
      reduce_scatter: palette.reduce_scatter,
      wait: palette.wait,
    };
    const naive: number[] = [];
    const step = Math.max(1, Math.ceil(wins.length / o.naiveMaxFrames));
    let spent = 0;
    for (let i = 0; i < wins.length && (naive.length < 3 || spent < o.naiveBudgetMs); i += step) {
      const scale = base.withWindow(wins[i]);
      naive.push(
        frameOf(() => naiveDraw(ctx, events, laneTop, layout.laneHeightPx, scale, colors, palette.textOnBar, w, h)),
      );
      spent += naive[naive.length - 1];
    }
    const rec: TimelineRecord = {
      events: n,
      lanes: cols.lanes.length,
      frames: ours.length,
      buildMs,
      oursMedianMs: midpointMedian(ours),
      oursP95Ms: percentile(ours, 95),
      oursMaxMs: Math.max(...ours),
      naiveFrames: naive.length,
      naiveMedianMs: midpointMedian(naive),
      naiveP95Ms: percentile(naive, 95),
      rectsMedian: midpointMedian(rects),
      oursTimesMs: ours,
      rects,
    };
    console.info(
      `timeline ${n}: ours ${rec.oursMedianMs.toFixed(2)} / p95 ${rec.oursP95Ms.toFixed(2)} ms, naive ${rec.naiveMedianMs.toFixed(2)} ms`,
    );
    out.push(rec);
  }
  return out;
}

ready({ timeline: run as (o: never) => Promise<unknown> });
