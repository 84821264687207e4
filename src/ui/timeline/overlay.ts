// Drawn over a timeline after the events: the keyboard cursor (focused lane + centre line) and
// Perfetto-style flow arrows for the selected collective: its start on the comm stream → its
// wait on the compute stream → the first compute that reads the gathered parameter (or, for a
// reduce-scatter, the compute that produced the gradient → the collective → its wait).

import type { Schedule } from '../../store';
import type { TimeScale, TraceEvent } from '../../trace';
import type { Palette } from '../palette';
import { baseName } from '../reason_lookup';
import type { TimelineColumns } from './columns';
import type { LaneLayout } from './draw';

/** One hop of a flow: from the end (or start) of one event to the start of another. */
export interface FlowHop {
  readonly from: number; // event index
  readonly to: number;
  readonly fromEdge: 'start' | 'end';
}

const collectiveBase = (name: string) => name.replace(/\.(all_gather|reduce_scatter)$/, '');

/** Event indices that consume a collective's result (the compute reading `<param>.full`). */
function consumerNodes(schedule: Schedule | undefined, params: readonly string[]): Set<string> {
  const want = new Set(params.map((p) => `${p}.full`));
  const out = new Set<string>();
  for (const n of schedule?.graph.nodes ?? []) {
    if (n.kind === 'compute' && n.inputs.some((i) => want.has(i))) out.add(n.name);
  }
  return out;
}

/** The flow of the selected collective event on its own rank: [start → wait, wait → use]. */
export function flowOf(events: readonly TraceEvent[], schedule: Schedule | undefined, sel: number): FlowHop[] {
  const e = events[sel];
  if (!e || (e.kind !== 'all_gather' && e.kind !== 'reduce_scatter')) return [];
  const base = collectiveBase(e.name);
  let wait = -1;
  for (let i = 0; i < events.length && wait < 0; i++) {
    const w = events[i];
    if (w.rank === e.rank && w.kind === 'wait' && baseName(w.name) === base) wait = i;
  }
  const hops: FlowHop[] = [];
  if (wait >= 0) hops.push({ from: sel, to: wait, fromEdge: 'start' });
  if (e.kind === 'all_gather') {
    const users = consumerNodes(schedule, e.params ?? []);
    const after = wait >= 0 ? events[wait].start + events[wait].dur : e.start + e.dur;
    let use = -1;
    for (let i = 0; i < events.length; i++) {
      const c = events[i];
      const isUse = c.rank === e.rank && c.kind === 'compute' && users.has(c.name) && c.start >= after - 1e-9;
      if (isUse && (use < 0 || c.start < events[use].start)) use = i;
    }
    if (use >= 0 && wait >= 0) hops.push({ from: wait, to: use, fromEdge: 'end' });
  }
  return hops;
}

export interface OverlayInput {
  readonly ctx: CanvasRenderingContext2D;
  readonly cols: TimelineColumns;
  readonly layout: LaneLayout;
  readonly scale: TimeScale;
  readonly palette: Palette;
  readonly events: readonly TraceEvent[];
  readonly flow: readonly FlowHop[];
  readonly keyLane: number; // -1: the canvas has no keyboard focus
  readonly heightPx: number;
}

function laneOfEvent(c: TimelineColumns, e: TraceEvent): number {
  return c.lanes.findIndex((l) => l.rank === e.rank && l.stream === e.stream);
}

function arrow(ctx: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number): void {
  const mx = (x0 + x1) / 2;
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.bezierCurveTo(mx, y0, mx, y1, x1, y1);
  ctx.stroke();
  const a = Math.atan2(y1 - y0, Math.max(4, x1 - mx)); // tangent at the end of the curve
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 7 * Math.cos(a - 0.45), y1 - 7 * Math.sin(a - 0.45));
  ctx.lineTo(x1 - 7 * Math.cos(a + 0.45), y1 - 7 * Math.sin(a + 0.45));
  ctx.closePath();
  ctx.fill();
}

/** Draw flow arrows and the keyboard cursor; returns how many arrows were drawn. */
export function drawOverlay(d: OverlayInput): number {
  const { ctx, cols, layout, scale, palette: p } = d;
  const half = layout.laneHeightPx / 2;
  let n = 0;
  ctx.save();
  ctx.strokeStyle = p.selected;
  ctx.fillStyle = p.selected;
  ctx.lineWidth = 1.5;
  for (const h of d.flow) {
    const a = d.events[h.from];
    const b = d.events[h.to];
    const la = laneOfEvent(cols, a);
    const lb = laneOfEvent(cols, b);
    if (la < 0 || lb < 0) continue;
    const xa = scale.timeToPx(h.fromEdge === 'start' ? a.start : a.start + a.dur);
    arrow(ctx, xa, layout.top[la] + half, scale.timeToPx(b.start), layout.top[lb] + half);
    n++;
  }
  if (d.keyLane >= 0 && d.keyLane < cols.lanes.length) {
    const y = layout.top[d.keyLane];
    const xm = scale.x0Px + scale.widthPx / 2;
    ctx.strokeStyle = p.bucket;
    ctx.lineWidth = 2;
    ctx.strokeRect(1, y - 1, scale.x0Px + scale.widthPx, layout.laneHeightPx + 2);
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(xm, 0);
    ctx.lineTo(xm, d.heightPx);
    ctx.stroke();
  }
  ctx.restore();
  return n;
}
