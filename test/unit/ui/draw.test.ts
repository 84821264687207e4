// drawTimeline on a recording 2D context (Node: no OffscreenCanvas, so snapped columns are filled
// as run rectangles): a zoomed-out 100k-event frame stays bounded by pixels and batched by colour,
// and every column a sub-pixel event starts in is painted in some event colour.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../../src/trace/event';
import { paletteFor } from '../../../src/ui/palette';
import { buildColumns } from '../../../src/ui/timeline/columns';
import { GUTTER_PX, drawTimeline, layoutLanes } from '../../../src/ui/timeline/draw';
import { TimeScale } from '../../../src/trace/time_scale';

class FakePath2D {
  rect(): void {}
}

interface Call {
  readonly style: string;
  readonly x: number;
  readonly y: number;
  readonly w: number;
}

function recordingContext() {
  const calls: Call[] = [];
  let styleSets = 0;
  let fillStyle = '';
  const ctx = {
    get fillStyle() {
      return fillStyle;
    },
    set fillStyle(v: string) {
      fillStyle = v;
      styleSets++;
    },
    fillRect: (x: number, y: number, w: number) => calls.push({ style: fillStyle, x, y, w }),
    measureText: (s: string) => ({ width: 6 * s.length }),
  };
  const noop = () => {};
  const proxy = new Proxy(ctx as Record<string, unknown>, {
    get: (t, k) => (k in t ? t[k as string] : noop),
    set: (t, k, v) => {
      t[k as string] = v;
      return true;
    },
  });
  return { ctx: proxy as unknown as CanvasRenderingContext2D, calls, styleSets: () => styleSets };
}

function trace(n: number, ranks: number): TraceEvent[] {
  const out: TraceEvent[] = [];
  const per = n / (ranks * 2);
  for (let rank = 0; rank < ranks; rank++) {
    for (let i = 0; i < per; i++) {
      const t = i * 10 + rank * 0.3;
      out.push({ rank, stream: 'compute', name: `mm_${i}`, kind: i % 4 === 1 ? 'wait' : 'compute', start: t, dur: 8 });
      out.push({
        rank,
        stream: 'comm:dp',
        name: `ag_${i}`,
        kind: i % 2 ? 'all_gather' : 'reduce_scatter',
        start: t + 2,
        dur: 9,
      });
    }
  }
  return out;
}

describe('drawTimeline', () => {
  let saved: unknown;
  beforeAll(() => {
    saved = (globalThis as { Path2D?: unknown }).Path2D;
    (globalThis as { Path2D?: unknown }).Path2D = FakePath2D;
  });
  afterAll(() => {
    (globalThis as { Path2D?: unknown }).Path2D = saved;
  });

  it('fills a zoomed-out 100k-event frame with at most one rectangle per lane-pixel, batched by colour', () => {
    const events = trace(100_000, 8);
    const cols = buildColumns(events);
    const layout = layoutLanes(cols);
    const widthPx = 1200;
    const scale = new TimeScale({ startUs: 0, endUs: cols.endUs }, GUTTER_PX, widthPx - GUTTER_PX - 8);
    const rec = recordingContext();
    const p = paletteFor('light');
    const drawn = drawTimeline({
      ctx: rec.ctx,
      cols,
      layout,
      scale,
      palette: p,
      names: (i) => events[i].name,
      highlight: { bucketId: -1, eventIndex: -1 },
      cssWidthPx: widthPx,
      cssHeightPx: layout.heightPx,
    });
    // waits are drawn in the late-peer colour, red goes over their exposed part
    const kindColors = new Set([p.compute, p.all_gather, p.reduce_scatter, p.peerWait]);
    const eventRects = rec.calls.filter((c) => kindColors.has(c.style));
    expect(eventRects.length).toBe(drawn);
    expect(drawn).toBeLessThanOrEqual(cols.lanes.length * scale.widthPx);
    expect(drawn).toBeGreaterThan(cols.lanes.length); // every lane has something in view
    expect(rec.styleSets()).toBeLessThan(20); // one fillStyle per colour, not per rectangle

    // every column where a visible event starts is painted on its lane (no event silently lost)
    for (let li = 0; li < cols.lanes.length; li++) {
      const y = layout.top[li];
      const painted = new Uint8Array(Math.ceil(scale.x0Px + scale.widthPx) + 2);
      for (const r of eventRects) {
        if (r.y !== y) continue;
        for (let x = Math.floor(r.x); x < Math.ceil(r.x + r.w); x++) painted[x] = 1;
      }
      for (let q = cols.laneOffset[li]; q < cols.laneOffset[li + 1]; q += 97) {
        expect(painted[Math.floor(scale.timeToPx(cols.startUs[q]))]).toBe(1);
      }
    }
  });
});
