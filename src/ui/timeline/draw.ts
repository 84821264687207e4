// Canvas drawing of one timeline: lane backgrounds, exposed-comm bands, rectangles (one pass),
// labels (second pass), bucket/selection outlines, the story's subject (presentation view) and the
// collective-mismatch marker. A wait is drawn in the late-peer colour, and red over the part of it
// under exposed communication (columns.ts waitExposed: the metric's own intervals).
// Culls offscreen items; events under SNAP_PX snap to pixel columns drawn as one image row per lane
// (lane_runs.ts, column_image.ts) and wider ones are fillRects batched per colour (rect_batch.ts),
// so a zoomed-out frame costs about the canvas width, not the event count.

import type { Palette } from '../palette';
import { KIND_CODES, firstVisible, type TimelineColumns } from './columns';
import { ColumnImage } from './column_image';
import { columnGrid, exposedRuns, laneColumns, rowRuns, type ExposedPaths } from './lane_runs';
import { RectBatch } from './rect_batch';
import { isCommStream, type TimeScale } from '../../trace';

/** Lane height shrinks as lanes grow so both timelines fit a 720 px screen; `big`: presentation view. */
function laneHeightFor(lanes: number, big: boolean): number {
  const h = lanes <= 4 ? 22 : lanes <= 8 ? 18 : lanes <= 16 ? 14 : 10;
  return big ? Math.round(h * 1.5) : h;
}
const LANE_GAP_PX = 3;
const RANK_GAP_PX = 6;
export const GUTTER_PX = 118; // lane labels: 'r0–r7 comm:dp' at 13 px
/** Rects narrower than this get no label. */
export const MIN_LABEL_PX = 36;
const FONT = '13px system-ui, sans-serif';
/** Padding of the story's subject outline around its events (presentation view). */
const SUBJECT_PAD_PX = 4;

interface Highlight {
  readonly bucketId: number; // -1: none
  readonly eventIndex: number; // source index, -1: none
}

interface MismatchMarker {
  readonly rank: number;
  readonly timeUs: number;
  readonly label: string;
}

export interface LaneLayout {
  readonly top: Float64Array; // y of each lane
  readonly laneHeightPx: number;
  readonly heightPx: number; // total
}

export function layoutLanes(c: TimelineColumns, big = false): LaneLayout {
  const top = new Float64Array(c.lanes.length);
  const laneH = laneHeightFor(c.lanes.length, big);
  let y = 4;
  c.lanes.forEach((l, i) => {
    if (i > 0 && c.lanes[i - 1].rank !== l.rank) y += RANK_GAP_PX;
    top[i] = y;
    y += laneH + LANE_GAP_PX;
  });
  return { top, laneHeightPx: laneH, heightPx: y + 4 };
}

/** Lane index at y, or -1. */
export function laneAt(layout: LaneLayout, yPx: number): number {
  for (let i = 0; i < layout.top.length; i++) {
    if (yPx >= layout.top[i] && yPx < layout.top[i] + layout.laneHeightPx) return i;
  }
  return -1;
}

let charWidthPx = 0; // measured once

function fitLabel(ctx: CanvasRenderingContext2D, text: string, widthPx: number): string {
  if (!charWidthPx) charWidthPx = ctx.measureText('abcdefghijklmnopqrstuvwxyz0123456789._').width / 38;
  const maxChars = Math.floor((widthPx - 6) / charWidthPx);
  if (maxChars < 3) return '';
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

export interface DrawInput {
  readonly ctx: CanvasRenderingContext2D;
  readonly cols: TimelineColumns;
  readonly layout: LaneLayout;
  readonly scale: TimeScale;
  readonly palette: Palette;
  readonly names: (eventIndex: number) => string;
  readonly highlight: Highlight;
  readonly mismatch?: MismatchMarker;
  /** Events whose collective torch's log decided otherwise (an FX import with its log): outlined. */
  readonly flagged?: ReadonlySet<number>;
  readonly cssWidthPx: number;
  readonly cssHeightPx: number;
  /**
   * Outline the highlighted event's bucket (or the event) boldly, the story's subject in the
   * presentation view: its box is written here (null: not in view).
   */
  readonly subject?: { box: BoxPx | null };
}

/** A box on the canvas, CSS px. */
interface BoxPx {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

const rects = new RectBatch(KIND_CODES.length); // reused every frame
const columns = new ColumnImage();

/** Strokes a box around every visible event `colorOf` gives a colour, `padPx` outside it. */
function outlineEvents(d: DrawInput, colorOf: (q: number) => string | null, padPx: number): void {
  const { ctx, cols: c, layout, scale } = d;
  const t0 = scale.window.startUs;
  const t1 = scale.window.endUs;
  for (let li = 0; li < c.lanes.length; li++) {
    const y = layout.top[li];
    const end = c.laneOffset[li + 1];
    for (let q = firstVisible(c, li, t0); q < end; q++) {
      const s = c.startUs[q];
      if (s > t1) break;
      const color = colorOf(q);
      if (color === null) continue;
      ctx.strokeStyle = color;
      const w = Math.max(3, scale.durToPx(c.durUs[q]));
      ctx.strokeRect(scale.timeToPx(s) - padPx + 1, y - padPx, w + 2 * padPx - 2, layout.laneHeightPx + 2 * padPx);
    }
  }
}

/** Pass 1: rectangles. Narrow events snap to pixel columns (one image row per lane, or run
 * rectangles where there is no OffscreenCanvas); wide ones are exact, one fill per colour. */
function drawRects(d: DrawInput, strip: Path2D): number {
  const { ctx, cols: c, layout, scale, palette: p } = d;
  const laneH = layout.laneHeightPx;
  const grid = columnGrid(scale);
  const kindColors = KIND_CODES.map((k) => (k === 'wait' ? p.peerWait : p[k])); // red goes over the exposed part
  rects.reset();
  columns.begin(grid, c.lanes.length);
  for (let li = 0; li < c.lanes.length; li++) {
    laneColumns(c, li, scale, grid, columns.row(li), rects, layout.top[li], laneH);
  }
  let drawn = columns.draw(ctx, grid, layout.top, laneH, kindColors); // runs drawn as image rows
  if (drawn < 0) {
    drawn = 0; // no offscreen canvas: the runs join the rectangle batch (counted by total())
    for (let li = 0; li < c.lanes.length; li++) {
      const y = layout.top[li];
      rowRuns(columns.row(li), (code, j, n) => rects.push(code - 1, grid.colBase + j, y, n, laneH));
    }
  }
  drawn += rects.total();
  rects.fill(ctx, kindColors);
  ctx.fillStyle = p.wait;
  ctx.fill(strip);
  const waitRed: ExposedPaths = { band: new Path2D(), strip: new Path2D() };
  exposedRuns(c, layout, scale, waitRed, c.waitExposed, 0);
  ctx.fill(waitRed.band);
  return drawn;
}

/** Pass 2: the name inside every event wide enough to hold a few characters. */
function drawLabels(d: DrawInput): void {
  const { ctx, cols: c, layout, scale } = d;
  const x0 = scale.x0Px;
  const x1 = scale.x0Px + scale.widthPx;
  const t0 = scale.window.startUs;
  const t1 = scale.window.endUs;
  ctx.fillStyle = d.palette.textOnBar;
  ctx.font = `${Math.min(13, layout.laneHeightPx - 3)}px system-ui, sans-serif`;
  for (let li = 0; li < c.lanes.length; li++) {
    if (scale.durToPx(c.laneMaxDurUs[li]) < MIN_LABEL_PX) continue; // no event in this lane is wide enough
    const y = layout.top[li] + layout.laneHeightPx / 2;
    const end = c.laneOffset[li + 1];
    for (let q = firstVisible(c, li, t0); q < end; q++) {
      const s = c.startUs[q];
      if (s > t1) break;
      const w = scale.durToPx(c.durUs[q]);
      if (w < MIN_LABEL_PX) continue;
      const xa = Math.max(x0, scale.timeToPx(s));
      const visibleW = Math.min(x1, scale.timeToPx(s) + w) - xa;
      const label = fitLabel(ctx, d.names(c.eventIndex[q]), visibleW);
      if (label) ctx.fillText(label, xa + 3, y);
    }
  }
}

/** Pass 3: bucket members and the selected event; pass 4: disagreements with torch's log, dashed. */
function drawOutlines(d: DrawInput): void {
  const { ctx, cols: c, palette: p } = d;
  const hl = d.highlight;
  if (hl.bucketId >= 0 || hl.eventIndex >= 0) {
    ctx.lineWidth = 2;
    outlineEvents(
      d,
      (q) => {
        if (c.eventIndex[q] === hl.eventIndex) return p.selected;
        return hl.bucketId >= 0 && c.bucket[q] === hl.bucketId ? p.bucket : null;
      },
      1.5,
    );
  }
  const flagged = d.flagged;
  if (flagged && flagged.size > 0) {
    ctx.lineWidth = 1.5;
    ctx.setLineDash([3, 2]);
    outlineEvents(d, (q) => (flagged.has(c.eventIndex[q]) ? p.mismatch : null), 3);
    ctx.setLineDash([]);
  }
}

/**
 * The story's subject: the highlighted event's bucket members in its lane (or the event alone),
 * outlined boldly, its box returned; null when it is not in the window.
 */
function drawSubject(d: DrawInput): BoxPx | null {
  const { ctx, cols: c, layout, scale, palette: p } = d;
  const sel = d.highlight.eventIndex;
  if (sel < 0) return null;
  const at = c.eventIndex.indexOf(sel);
  if (at < 0) return null;
  let li = 0;
  while (c.laneOffset[li + 1] <= at) li++;
  let s = c.startUs[at];
  let e = s + c.durUs[at];
  const bucket = c.bucket[at];
  for (let q = c.laneOffset[li]; bucket >= 0 && q < c.laneOffset[li + 1]; q++) {
    if (c.bucket[q] !== bucket) continue;
    s = Math.min(s, c.startUs[q]);
    e = Math.max(e, c.startUs[q] + c.durUs[q]);
  }
  if (e < scale.window.startUs || s > scale.window.endUs) return null;
  const xa = Math.max(scale.x0Px, scale.timeToPx(s)) - SUBJECT_PAD_PX;
  const xb = Math.min(scale.x0Px + scale.widthPx, Math.max(scale.timeToPx(e), scale.timeToPx(s) + 3)) + SUBJECT_PAD_PX;
  const box = { x: xa, y: layout.top[li] - SUBJECT_PAD_PX, w: xb - xa, h: layout.laneHeightPx + 2 * SUBJECT_PAD_PX };
  ctx.lineWidth = 6;
  ctx.strokeStyle = p.bucket; // a wide halo in the bucket colour, then a sharp edge
  ctx.strokeRect(box.x, box.y, box.w, box.h);
  ctx.lineWidth = 2;
  ctx.strokeStyle = p.selected;
  ctx.strokeRect(box.x, box.y, box.w, box.h);
  return box;
}

/** Collective mismatch: a marker at the rank and time where ranks diverged. */
function drawMismatch(d: DrawInput, m: MismatchMarker): void {
  const { ctx, cols: c, layout, scale, palette: p } = d;
  const laneH = layout.laneHeightPx;
  const x0 = scale.x0Px;
  const x1 = scale.x0Px + scale.widthPx;
  const li = c.lanes.findIndex((l) => l.rank === m.rank && isCommStream(l.stream));
  const lane = li >= 0 ? li : c.lanes.findIndex((l) => l.rank === m.rank);
  const x = Math.min(x1 - 2, Math.max(x0 + 2, scale.timeToPx(m.timeUs)));
  const y = lane >= 0 ? layout.top[lane] : 4;
  ctx.strokeStyle = p.mismatch;
  ctx.fillStyle = p.mismatch;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(x, 0);
  ctx.lineTo(x, d.cssHeightPx);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x - 7, y - 2);
  ctx.lineTo(x + 7, y - 2);
  ctx.lineTo(x, y + laneH / 2 + 2);
  ctx.closePath();
  ctx.fill();
  ctx.font = `bold ${FONT}`;
  ctx.fillText(`✕ ${m.label}`, Math.min(x + 9, x1 - 300), y + laneH / 2);
}

/** Draw everything; returns the number of rectangles filled (for tests and the perf note). */
export function drawTimeline(d: DrawInput): number {
  const { ctx, cols: c, layout, scale, palette: p } = d;
  const laneH = layout.laneHeightPx;
  ctx.clearRect(0, 0, d.cssWidthPx, d.cssHeightPx);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  const x0 = scale.x0Px;
  const x1 = scale.x0Px + scale.widthPx;
  const bands: ExposedPaths = { band: new Path2D(), strip: new Path2D() };

  // lane backgrounds
  ctx.fillStyle = p.laneAlt;
  for (let li = 1; li < c.lanes.length; li += 2) ctx.fillRect(x0, layout.top[li], x1 - x0, laneH);

  // exposed intervals, batched into two paths: a band behind the lane and a strip on its bottom edge
  exposedRuns(c, layout, scale, bands);
  ctx.fillStyle = p.exposed;
  ctx.fill(bands.band);

  ctx.save();
  ctx.beginPath();
  ctx.rect(x0, 0, x1 - x0, d.cssHeightPx);
  ctx.clip();
  const drawn = drawRects(d, bands.strip);
  drawLabels(d);
  drawOutlines(d);
  ctx.restore();
  ctx.font = FONT;
  if (d.subject) d.subject.box = drawSubject(d);

  // lane labels (gutter); bigger on the presentation view's tall lanes
  ctx.fillStyle = p.text;
  if (laneH >= 27) ctx.font = '16px system-ui, sans-serif';
  for (let li = 0; li < c.lanes.length; li++) {
    ctx.fillText(c.lanes[li].label, 4, layout.top[li] + laneH / 2, GUTTER_PX - 8);
  }
  if (d.mismatch) drawMismatch(d, d.mismatch);
  return drawn;
}
