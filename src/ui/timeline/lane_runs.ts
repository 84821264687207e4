// One lane's rectangles for a frame, culled to the visible window and merged by pixel column:
// events ≥ 1 px wide are drawn as they are; sub-pixel events become 1-px ticks (the first event
// starting in a column claims it), and consecutive ticks of one kind merge into one run-length
// rectangle. Also the exposed-comm band/strip rectangles, merged across sub-pixel gaps.
// Cost per lane: O(log n) to find the first visible event, then O(visible events) — or, when the
// whole lane is sub-pixel, O(pixel columns · log) by jumping over each claimed column.

import { firstExposed, firstVisible, nextStartAtOrAfter, type TimelineColumns } from './columns';
import type { RectBatch } from './rect_batch';
import type { TimeScale } from './time_scale';

/** Events narrower than this are ticks merged per pixel column. */
export const SUB_PIXEL_PX = 1;
/** Wide rectangles keep a gap this wide on their right edge (when wider than WIDE_GAP_MIN_PX). */
const WIDE_GAP_PX = 0.5;
const WIDE_GAP_MIN_PX = 3;
/** Exposed intervals separated by less than this merge into one band rectangle. */
export const EXPOSED_MERGE_GAP_PX = 1;
/** Height of the red strip marking comm time not hidden by compute. */
export const EXPOSED_STRIP_PX = 3;

export interface ExposedPaths {
  readonly band: Path2D; // behind the lane
  readonly strip: Path2D; // on its bottom edge
}

/** Push lane li's visible rectangles (slot = kind code) into `out`. */
export function laneRects(c: TimelineColumns, li: number, yPx: number, laneHPx: number, scale: TimeScale, out: RectBatch): void {
  const ws = scale.window.startUs;
  const t1 = scale.window.endUs;
  const pxPerUs = scale.pxPerUs;
  const x0 = scale.x0Px;
  const end = c.laneOffset[li + 1];
  const allSubPixel = c.laneMaxDurUs[li] * pxPerUs < SUB_PIXEL_PX;
  const { startUs, durUs, kind } = c;
  let lastPx = -1; // right-most pixel column claimed in this lane
  let runKind = -1; // current run of ticks: kind and columns [runStart, runEnd]
  let runStart = 0;
  let runEnd = -2;
  let q = firstVisible(c, li, ws);
  while (q < end) {
    const s = startUs[q];
    if (s > t1) break;
    const xa = x0 + (s - ws) * pxPerUs;
    const w = durUs[q] * pxPerUs;
    const k = kind[q];
    if (w < SUB_PIXEL_PX) {
      const px = Math.floor(xa);
      if (px > lastPx) {
        lastPx = px;
        if (k === runKind && px === runEnd + 1) runEnd = px;
        else {
          if (runKind >= 0) out.push(runKind, runStart, yPx, runEnd - runStart + 1, laneHPx);
          runKind = k;
          runStart = runEnd = px;
        }
      }
      if (allSubPixel) {
        // every later event starting in a claimed column is merged away: jump to the next column
        q = nextStartAtOrAfter(c, q + 1, end, ws + (lastPx + 1 - x0) / pxPerUs);
        continue;
      }
    } else {
      out.push(k, xa, yPx, w - (w > WIDE_GAP_MIN_PX ? WIDE_GAP_PX : 0), laneHPx);
      lastPx = Math.floor(xa + w);
    }
    q++;
  }
  if (runKind >= 0) out.push(runKind, runStart, yPx, runEnd - runStart + 1, laneHPx);
}

/** Add every lane's visible exposed intervals to the band and strip paths, merged across sub-pixel gaps. */
export function exposedRuns(c: TimelineColumns, layout: { readonly top: Float64Array; readonly laneHeightPx: number }, scale: TimeScale, out: ExposedPaths): void {
  const x0 = scale.x0Px;
  const x1 = scale.x0Px + scale.widthPx;
  const t1 = scale.window.endUs;
  const laneH = layout.laneHeightPx;
  const { exposedStartUs, exposedEndUs, exposedOffset } = c;
  for (let li = 0; li < c.lanes.length; li++) {
    const y = layout.top[li];
    let runA = 0;
    let runB = -Infinity;
    const flush = () => {
      out.band.rect(runA, y - 1, runB - runA, laneH + 2);
      out.strip.rect(runA, y + laneH - EXPOSED_STRIP_PX, runB - runA, EXPOSED_STRIP_PX);
    };
    for (let k = firstExposed(c, li, scale.window.startUs); k < exposedOffset[li + 1]; k++) {
      const s = exposedStartUs[k];
      if (s > t1) break;
      const xa = Math.max(x0, scale.timeToPx(s));
      const xb = Math.max(xa + 1, Math.min(x1, scale.timeToPx(exposedEndUs[k])));
      if (xa - runB < EXPOSED_MERGE_GAP_PX) {
        if (xb > runB) runB = xb;
        continue;
      }
      if (runB > -Infinity) flush();
      runA = xa;
      runB = xb;
    }
    if (runB > -Infinity) flush();
  }
}
