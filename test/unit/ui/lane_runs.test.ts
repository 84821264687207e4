// Per-lane frame geometry: narrow events snapped to pixel columns (first event claims a column),
// wide ones kept exact, runs of one kind, the exposed bands — checked against brute force over the
// events (no jumping, no binary search), plus the search helpers and the colour parser.

import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../../src/trace/event';
import {
  buildColumns,
  firstExposed,
  nextStartAtOrAfter,
  nextStartOrLong,
  type TimelineColumns,
} from '../../../src/ui/timeline/columns';
import { parseCanvasColor } from '../../../src/ui/timeline/column_image';
import {
  EMPTY_COLUMN,
  SNAP_PX,
  columnGrid,
  exposedRuns,
  laneColumns,
  rowRuns,
  type ExposedPaths,
} from '../../../src/ui/timeline/lane_runs';
import { RectBatch } from '../../../src/ui/timeline/rect_batch';
import { TimeScale } from '../../../src/trace/time_scale';
import { rng } from '../../helpers/rng';

/** One rank, a compute lane (compute + waits) and a comm lane (all-gathers, reduce-scatters). */
function trace(seed: number, n: number, durScaleUs: number): TraceEvent[] {
  const r = rng(seed);
  const out: TraceEvent[] = [];
  let tc = 0;
  let tm = 0;
  for (let i = 0; i < n; i++) {
    const d = durScaleUs * (0.05 + r() * (r() < 0.1 ? 20 : 1));
    out.push({ rank: 0, stream: 'compute', kind: r() < 0.15 ? 'wait' : 'compute', start: tc, dur: d, name: `c${i}` });
    tc += d + r() * durScaleUs;
    const dm = durScaleUs * (0.05 + r() * 2);
    out.push({
      rank: 0,
      stream: 'comm:dp',
      kind: r() < 0.5 ? 'all_gather' : 'reduce_scatter',
      start: tm,
      dur: dm,
      name: `m${i}`,
    });
    tm += dm + r() * 3 * durScaleUs;
  }
  return out;
}

interface Frame {
  row: Uint8Array;
  wide: { kind: number; x: number; w: number }[];
}

function frame(c: TimelineColumns, li: number, scale: TimeScale): Frame {
  const grid = columnGrid(scale);
  const row = new Uint8Array(grid.nCols);
  const batch = new RectBatch(4);
  laneColumns(c, li, scale, grid, row, batch, 0, 10);
  const wide: Frame['wide'] = [];
  const probe = {
    fillStyle: '',
    fillRect: (x: number, _y: number, w: number) => wide.push({ kind: Number(probe.fillStyle), x, w }),
  };
  batch.fill(probe as unknown as CanvasRenderingContext2D, ['0', '1', '2', '3']);
  return { row, wide };
}

/** Reference: walk every event of the lane in start order, no culling tricks. */
function reference(c: TimelineColumns, li: number, scale: TimeScale): Frame {
  const grid = columnGrid(scale);
  const row = new Uint8Array(grid.nCols);
  const wide: Frame['wide'] = [];
  let lastPx = -Infinity;
  for (let q = c.laneOffset[li]; q < c.laneOffset[li + 1]; q++) {
    const s = c.startUs[q];
    const e = s + c.durUs[q];
    if (e <= scale.window.startUs || s > scale.window.endUs) continue;
    const xa = scale.timeToPx(s);
    const w = scale.durToPx(c.durUs[q]);
    if (w >= SNAP_PX) {
      wide.push({ kind: c.kind[q], x: xa, w });
      lastPx = Math.floor(xa + w);
      continue;
    }
    const a = w < 1 ? Math.floor(xa) : Math.round(xa);
    const b = w < 1 ? a : Math.max(a, Math.round(xa + w) - 1);
    for (let x = Math.max(a, lastPx + 1); x <= b; x++) {
      const j = x - grid.colBase;
      if (j >= 0 && j < grid.nCols) row[j] = c.kind[q] + 1;
    }
    lastPx = Math.max(lastPx, b);
  }
  return { row, wide };
}

const WINDOWS: [number, number][] = [
  [0, 1],
  [0, 0.25],
  [0.3, 0.35],
  [0.5, 0.5004],
  [0.9, 1],
];

describe('laneColumns', () => {
  for (const [durScale, what] of [
    [1, 'every event is sub-pixel'],
    [400, 'events are a few pixels wide'],
    [5000, 'events are wide'],
  ] as const) {
    it(`claims the same columns and wide rectangles as a brute-force walk when ${what}`, () => {
      const c = buildColumns(trace(5, 4000, durScale));
      for (const [f0, f1] of WINDOWS) {
        const scale = new TimeScale({ startUs: f0 * c.endUs, endUs: f1 * c.endUs }, 96, 1200);
        for (let li = 0; li < c.lanes.length; li++) {
          const got = frame(c, li, scale);
          const want = reference(c, li, scale);
          expect(Array.from(got.row)).toEqual(Array.from(want.row));
          const key = (r: Frame['wide'][number]) => `${r.kind}@${r.x.toFixed(6)}`;
          expect(got.wide.map(key).sort()).toEqual(want.wide.map(key).sort());
          for (const r of got.wide) expect(r.w).toBeGreaterThan(SNAP_PX - 0.5 - 1e-9);
        }
      }
    });
  }

  it('leaves every column empty when the window holds no event', () => {
    const c = buildColumns(trace(2, 100, 1));
    const scale = new TimeScale({ startUs: c.endUs + 10, endUs: c.endUs + 20 }, 96, 500);
    for (let li = 0; li < c.lanes.length; li++)
      expect(frame(c, li, scale).row.every((v) => v === EMPTY_COLUMN)).toBe(true);
  });
});

describe('rowRuns', () => {
  it('splits a row into maximal single-kind runs that rebuild it', () => {
    const row = Uint8Array.from([0, 1, 1, 2, 2, 2, 0, 0, 1, 3, 3, 0]);
    const runs: [number, number, number][] = [];
    expect(rowRuns(row, (code, j, n) => runs.push([code, j, n]))).toBe(4);
    expect(runs).toEqual([
      [1, 1, 2],
      [2, 3, 3],
      [1, 8, 1],
      [3, 9, 2],
    ]);
    const rebuilt = new Uint8Array(row.length);
    for (const [code, j, n] of runs) rebuilt.fill(code, j, j + n);
    expect(Array.from(rebuilt)).toEqual(Array.from(row));
  });
});

describe('exposedRuns', () => {
  it('covers every visible exposed interval with at most one band rectangle per interval', () => {
    const c = buildColumns(trace(9, 3000, 10));
    const scale = new TimeScale({ startUs: 0.2 * c.endUs, endUs: 0.6 * c.endUs }, 96, 800);
    const bands: [number, number][] = [];
    const paths = {
      band: { rect: (x: number, _y: number, w: number) => bands.push([x, x + w]) },
      strip: { rect: () => {} },
    };
    exposedRuns(
      c,
      { top: new Float64Array(c.lanes.length), laneHeightPx: 10 },
      scale,
      paths as unknown as ExposedPaths,
    );
    let visible = 0;
    for (let k = 0; k < c.exposedStartUs.length; k++) {
      const s = c.exposedStartUs[k];
      const e = c.exposedEndUs[k];
      if (e < scale.window.startUs || s > scale.window.endUs) continue;
      visible++;
      const xa = Math.max(scale.x0Px, scale.timeToPx(s));
      const xb = Math.min(scale.x0Px + scale.widthPx, scale.timeToPx(e));
      expect(bands.some(([a, b]) => a <= xa + 1e-9 && b >= xb - 1e-9)).toBe(true);
    }
    expect(visible).toBeGreaterThan(0);
    expect(bands.length).toBeLessThanOrEqual(visible);
  });
});

describe('nextStartAtOrAfter / nextStartOrLong / firstExposed', () => {
  it('agree with a linear scan', () => {
    const c = buildColumns(trace(4, 500, 3));
    const r = rng(1);
    for (let i = 0; i < 300; i++) {
      const li = i % c.lanes.length;
      const t = r() * c.endUs * 1.1 - 5;
      const a = c.laneOffset[li];
      const end = c.laneOffset[li + 1];
      const from = a + Math.floor(r() * (end - a));
      let want = from;
      while (want < end && c.startUs[want] < t) want++;
      expect(nextStartAtOrAfter(c, from, end, t)).toBe(want);
      const longUs = 1 + r() * 40;
      let wantLong = from;
      while (wantLong < end && c.startUs[wantLong] < t && c.durUs[wantLong] < longUs) wantLong++;
      expect(nextStartOrLong(c, from, end, t, longUs)).toBe(wantLong);
      let wantEx = c.exposedOffset[li];
      while (wantEx < c.exposedOffset[li + 1] && c.exposedEndUs[wantEx] < t) wantEx++;
      expect(firstExposed(c, li, t)).toBe(wantEx);
    }
  });
});

describe('parseCanvasColor', () => {
  it('reads the two forms a canvas normalises colours to', () => {
    expect(parseCanvasColor('#4e79a7')).toEqual([0x4e, 0x79, 0xa7, 255]);
    expect(parseCanvasColor('rgba(225, 87, 89, 0.22)')).toEqual([225, 87, 89, Math.round(255 * 0.22)]);
    expect(parseCanvasColor('rgb(1, 2, 3)')).toEqual([1, 2, 3, 255]);
    expect(parseCanvasColor('papayawhip')).toBeNull();
  });
});
