// One lane's rectangles for a frame, culled to the visible window and merged by pixel column:
// events at least SNAP_PX wide are drawn as they are (exact, anti-aliased rectangles); narrower ones
// are snapped to whole pixel columns written into a per-lane row of kind codes, where the first
// event reaching a column claims it (sub-pixel events take the column they start in). Runs of one
// kind in a row are then one rectangle (or one stretched image row, column_image.ts).
// Also the exposed-comm band/strip rectangles, merged across sub-pixel gaps.
// Cost per lane: O(log n) to find the first visible event, then O(visible events) — or, when the
// whole lane is sub-pixel, O(pixel columns · log n) by jumping over each claimed column (with longer
// events in the lane, the jump steps over blocks of sub-pixel events instead).

import { bisectLeft } from 'd3';
import {
  firstVisible,
  gallopAtOrAfter,
  nextStartAtOrAfter,
  nextStartOrLong,
  type LaneIntervals,
  type TimelineColumns,
} from './columns';
import type { RectBatch } from './rect_batch';
import type { TimeScale } from '../../trace';

/** Events narrower than this snap to whole pixel columns; wider ones are exact rectangles. */
export const SNAP_PX = 3;
/** Wide rectangles keep a gap this wide on their right edge (when wider than WIDE_GAP_MIN_PX). */
const WIDE_GAP_PX = 0.5;
const WIDE_GAP_MIN_PX = 3;
/** Exposed intervals separated by less than this merge into one band rectangle. */
const EXPOSED_MERGE_GAP_PX = 1;
/** Height of the red strip marking comm time not hidden by compute. */
const EXPOSED_STRIP_PX = 3;
/** Row value of a column no event claimed; a claimed column holds kind code + 1. */
export const EMPTY_COLUMN = 0;

export interface ExposedPaths {
  readonly band: Path2D; // behind the lane
  readonly strip: Path2D; // on its bottom edge
}

/** The pixel columns a frame snaps to: column j covers x ∈ [colBase + j, colBase + j + 1). */
export interface ColumnGrid {
  readonly colBase: number;
  readonly nCols: number;
}

export function columnGrid(scale: TimeScale): ColumnGrid {
  const colBase = Math.floor(scale.x0Px);
  return { colBase, nCols: Math.max(0, Math.ceil(scale.x0Px + scale.widthPx) - colBase) };
}

/**
 * Lane li for one frame: narrow events into `row` (length grid.nCols, all EMPTY_COLUMN on entry;
 * claimed columns get kind + 1), wide ones into `wide` (slot = kind code) at y = yPx.
 */
export function laneColumns(
  c: TimelineColumns,
  li: number,
  scale: TimeScale,
  grid: ColumnGrid,
  row: Uint8Array,
  wide: RectBatch,
  yPx: number,
  laneHPx: number,
): void {
  const ws = scale.window.startUs;
  const t1 = scale.window.endUs;
  const pxPerUs = scale.pxPerUs;
  const x0 = scale.x0Px;
  const { colBase, nCols } = grid;
  const end = c.laneOffset[li + 1];
  const allSubPixel = c.laneMaxDurUs[li] * pxPerUs < 1;
  const { startUs, durUs, kind } = c;
  let lastPx = -Infinity; // right-most pixel column (absolute x) claimed in this lane
  let q = firstVisible(c, li, ws);
  while (q < end) {
    const s = startUs[q];
    if (s > t1) break;
    const xa = x0 + (s - ws) * pxPerUs;
    const w = durUs[q] * pxPerUs;
    if (w < SNAP_PX) {
      const a = w < 1 ? Math.floor(xa) : Math.round(xa);
      const b = w < 1 ? a : Math.max(a, Math.round(xa + w) - 1);
      if (b > lastPx) {
        const code = kind[q] + 1;
        const from = Math.max(a, lastPx + 1, colBase) - colBase;
        const to = Math.min(b - colBase, nCols - 1);
        for (let j = from; j <= to; j++) row[j] = code;
        lastPx = b;
      }
      // later sub-pixel events starting in a claimed column are merged away: jump past them
      const tNext = ws + (lastPx + 1 - x0) / pxPerUs;
      q = allSubPixel ? nextStartAtOrAfter(c, q + 1, end, tNext) : nextStartOrLong(c, q + 1, end, tNext, 1 / pxPerUs);
      continue;
    } else {
      wide.push(kind[q], xa, yPx, w - (w > WIDE_GAP_MIN_PX ? WIDE_GAP_PX : 0), laneHPx);
      lastPx = Math.floor(xa + w);
    }
    q++;
  }
}

/** Call run(code, firstCol, colCount) for each maximal run of one claimed code in `row`; returns the run count. */
export function rowRuns(row: Uint8Array, run?: (code: number, firstCol: number, cols: number) => void): number {
  let runs = 0;
  for (let j = 0; j < row.length; ) {
    const code = row[j];
    let k = j + 1;
    while (k < row.length && row[k] === code) k++;
    if (code !== EMPTY_COLUMN) {
      runs++;
      run?.(code, j, k - j);
    }
    j = k;
  }
  return runs;
}

/** The exposed-communication intervals of the columns as one LaneIntervals set. */
function exposedSet(c: TimelineColumns): LaneIntervals {
  return { offset: c.exposedOffset, startUs: c.exposedStartUs, endUs: c.exposedEndUs };
}

/**
 * Add every lane's visible intervals of `set` (default: exposed communication) to the band and
 * strip paths, merged across sub-pixel gaps.
 */
export function exposedRuns(
  c: TimelineColumns,
  layout: { readonly top: Float64Array; readonly laneHeightPx: number },
  scale: TimeScale,
  out: ExposedPaths,
  set: LaneIntervals = exposedSet(c),
  bandPadPx = 1,
): void {
  const x0 = scale.x0Px;
  const x1 = scale.x0Px + scale.widthPx;
  const t1 = scale.window.endUs;
  const laneH = layout.laneHeightPx;
  const { startUs: exposedStartUs, endUs: exposedEndUs, offset: exposedOffset } = set;
  for (let li = 0; li < c.lanes.length; li++) {
    const y = layout.top[li];
    let runA = 0;
    let runB = -Infinity;
    const flush = () => {
      out.band.rect(runA, y - bandPadPx, runB - runA, laneH + 2 * bandPadPx);
      out.strip.rect(runA, y + laneH - EXPOSED_STRIP_PX, runB - runA, EXPOSED_STRIP_PX);
    };
    const kEnd = exposedOffset[li + 1];
    for (let k = bisectLeft(exposedEndUs, scale.window.startUs, exposedOffset[li], kEnd); k < kEnd; k++) {
      const s = exposedStartUs[k];
      if (s > t1) break;
      const xa = Math.max(x0, scale.timeToPx(s));
      const xb = Math.max(xa + 1, Math.min(x1, scale.timeToPx(exposedEndUs[k])));
      if (xa - runB < EXPOSED_MERGE_GAP_PX) {
        if (xb > runB) runB = xb;
      } else {
        if (runB > -Infinity) flush();
        runA = xa;
        runB = xb;
      }
      // intervals starting within the merge gap of the run only extend it; the last of them (sorted,
      // disjoint) reaches furthest, so step to it directly
      const last = gallopAtOrAfter(exposedStartUs, k + 1, kEnd, scale.pxToTime(runB + EXPOSED_MERGE_GAP_PX)) - 1;
      if (last > k) {
        const lastXa = Math.max(x0, scale.timeToPx(exposedStartUs[last]));
        runB = Math.max(runB, lastXa + 1, Math.min(x1, scale.timeToPx(exposedEndUs[last])));
        k = last;
      }
    }
    if (runB > -Infinity) flush();
  }
}
