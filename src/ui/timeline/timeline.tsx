// One timeline (side A or B): lanes per rank × stream drawn on a canvas from columnar arrays,
// a d3 axis, wheel/drag zoom and pan on the shared window, hover card and click selection.
// React renders only when the side's data changes; window/selection/theme changes redraw the
// canvas through the rAF scheduler without a React render.

import { useEffect, useMemo, useRef } from 'react';
import { axisTop, scaleLinear, select } from 'd3';
import { appStore, useApp, type Side, type SideResult } from '../../store';
import { fmtBytes, fmtTick, fmtUs } from '../format';
import { paletteFor } from '../palette';
import { reasonsForEvent, bucketOf } from '../reasons';
import { useResolvedTheme } from '../theme';
import { buildColumns, hitTest, type TimelineColumns } from './columns';
import { GUTTER_PX, drawTimeline, laneAt, layoutLanes, type LaneLayout } from './draw';
import { cancelRedraw, scheduleRedraw } from './raf';
import { TimeScale } from './time_scale';

const AXIS_PX = 22;
const HOVER_TOL_PX = 3;
const WHEEL_ZOOM = 0.0015; // zoom factor per wheel delta unit: k = exp(dy · WHEEL_ZOOM)

interface Props {
  readonly side: Side;
  readonly label: string; // 'A', 'B'
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}

function hoverHtml(r: SideResult, i: number): string {
  const e = r.events[i];
  const rows: string[] = [
    `<b>${escapeHtml(e.name)}</b>`,
    `${e.kind}${e.op ? ` · op ${escapeHtml(e.op)}` : ''} · rank ${e.rank} · ${escapeHtml(e.stream)}`,
    `start ${fmtUs(e.start)} · duration ${fmtUs(e.dur)}`,
  ];
  if (e.bytes !== undefined) rows.push(`bytes ${fmtBytes(e.bytes)}`);
  const b = bucketOf(r.schedule, e);
  if (b) rows.push(`bucket #${b.id}: ${b.members.length} collectives, ${fmtBytes(b.bytes)}`);
  if (e.params?.length) rows.push(`params ${escapeHtml(e.params.slice(0, 4).join(', '))}${e.params.length > 4 ? ` +${e.params.length - 4}` : ''}`);
  const reasons = reasonsForEvent(r.schedule, e);
  if (reasons.length) rows.push(`<i>${escapeHtml(reasons[reasons.length - 1].text)}</i>`);
  return rows.join('<br>');
}

export function Timeline({ side, label }: Props) {
  const result = useApp((s) => s.sides[side]);
  const theme = useResolvedTheme();
  const bodyRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const axisRef = useRef<SVGSVGElement>(null);
  const tipRef = useRef<HTMLDivElement>(null);
  const cols: TimelineColumns | null = useMemo(() => (result ? buildColumns(result.events) : null), [result]);
  const layout: LaneLayout | null = useMemo(() => (cols ? layoutLanes(cols) : null), [cols]);
  const widthRef = useRef(800);
  const scaleRef = useRef<TimeScale | null>(null);

  // canvas redraw: imperative, coalesced per frame
  useEffect(() => {
    const canvas = canvasRef.current;
    const svg = axisRef.current;
    if (!canvas || !svg || !cols || !layout || !result) return;
    const palette = paletteFor(theme);
    const redraw = () => {
      const t0 = performance.now();
      const s = appStore.getState();
      const width = widthRef.current;
      const height = layout.heightPx;
      const dpr = window.devicePixelRatio || 1;
      if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
        canvas.width = Math.round(width * dpr);
        canvas.height = Math.round(height * dpr);
        canvas.style.width = `${width}px`;
        canvas.style.height = `${height}px`;
      }
      const ctx = canvas.getContext('2d');
      if (!ctx) return;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const scale = new TimeScale(s.window, GUTTER_PX, Math.max(10, width - GUTTER_PX - 8));
      scaleRef.current = scale;
      const sel = s.selection?.side === side ? s.selection.eventIndex : -1;
      const selEvent = sel >= 0 ? result.events[sel] : undefined;
      const mm = result.mismatch;
      const n = drawTimeline({
        ctx, cols, layout, scale, palette,
        names: (i) => result.events[i].name,
        highlight: { eventIndex: sel, bucketId: selEvent?.bucketId ?? -1 },
        mismatch: mm ? { rank: mm.ranks[1], timeUs: mm.timeUs, label: `collective mismatch #${mm.seq}: r${mm.ranks[0]} ≠ r${mm.ranks[1]} (${mm.ops[1].split(' ')[0]})` } : undefined,
        cssWidthPx: width,
        cssHeightPx: height,
      });
      canvas.dataset.drawn = String(n);
      canvas.dataset.laneTops = Array.from(layout.top, (t) => t + layout.laneHeightPx / 2).join(',');
      canvas.dataset.window = `${s.window.startUs.toFixed(3)},${s.window.endUs.toFixed(3)}`;
      // d3 axis on the same scale
      const x = scaleLinear().domain([s.window.startUs, s.window.endUs]).range([GUTTER_PX, GUTTER_PX + scale.widthPx]);
      svg.setAttribute('width', String(width));
      select(svg).select<SVGGElement>('g').attr('transform', `translate(0, ${AXIS_PX - 1})`)
        .call(axisTop(x).ticks(Math.max(2, Math.floor(scale.widthPx / 110))).tickFormat((d) => fmtTick(Number(d))));
      canvas.dataset.drawMs = (performance.now() - t0).toFixed(2); // read by the e2e perf check
    };
    const ro = new ResizeObserver(() => {
      widthRef.current = Math.max(300, bodyRef.current?.clientWidth ?? 800);
      scheduleRedraw(redraw);
    });
    if (bodyRef.current) ro.observe(bodyRef.current);
    widthRef.current = Math.max(300, bodyRef.current?.clientWidth ?? 800);
    scheduleRedraw(redraw);
    const unsub = appStore.subscribe((s, prev) => {
      if (s.window !== prev.window || s.selection !== prev.selection) scheduleRedraw(redraw);
    });
    return () => {
      unsub();
      ro.disconnect();
      cancelRedraw(redraw);
    };
  }, [cols, layout, result, theme, side]);

  // wheel zoom/pan, drag pan, hover, click
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !cols || !layout || !result) return;
    let drag: { x: number; startUs: number; endUs: number; moved: boolean } | null = null;
    const local = (ev: MouseEvent) => {
      const r = canvas.getBoundingClientRect();
      return { x: ev.clientX - r.left, y: ev.clientY - r.top };
    };
    const onWheel = (ev: WheelEvent) => {
      const scale = scaleRef.current;
      if (!scale) return;
      ev.preventDefault();
      const { x } = local(ev);
      const st = appStore.getState();
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        st.panBy(((ev.shiftKey ? ev.deltaY : ev.deltaX) / scale.widthPx) * 0.5);
      } else {
        st.zoomBy(Math.exp(ev.deltaY * WHEEL_ZOOM), scale.pxToTime(Math.max(x, GUTTER_PX)));
      }
    };
    const onDown = (ev: MouseEvent) => {
      const w = appStore.getState().window;
      drag = { x: ev.clientX, startUs: w.startUs, endUs: w.endUs, moved: false };
    };
    const onMove = (ev: MouseEvent) => {
      const scale = scaleRef.current;
      const tip = tipRef.current;
      if (!scale || !tip) return;
      if (drag && (ev.buttons & 1)) {
        const dx = ev.clientX - drag.x;
        if (Math.abs(dx) > 3) drag.moved = true;
        if (drag.moved) {
          const dUs = -dx / scale.pxPerUs;
          appStore.getState().setWindow({ startUs: drag.startUs + dUs, endUs: drag.endUs + dUs });
        }
        tip.hidden = true;
        return;
      }
      const { x, y } = local(ev);
      const li = laneAt(layout, y);
      const hit = x >= GUTTER_PX ? hitTest(cols, li, scale.pxToTime(x), HOVER_TOL_PX / scale.pxPerUs) : -1;
      if (hit < 0) {
        tip.hidden = true;
        canvas.style.cursor = 'grab';
        return;
      }
      canvas.style.cursor = 'pointer';
      tip.innerHTML = hoverHtml(result, hit);
      tip.hidden = false;
      const bodyW = bodyRef.current?.clientWidth ?? 800;
      tip.style.left = `${Math.min(x + 14, bodyW - 340)}px`;
      tip.style.top = `${y + AXIS_PX + 14}px`;
    };
    const onUp = (ev: MouseEvent) => {
      const wasDrag = drag?.moved;
      drag = null;
      if (wasDrag) return;
      const scale = scaleRef.current;
      if (!scale) return;
      const { x, y } = local(ev);
      const li = laneAt(layout, y);
      const hit = x >= GUTTER_PX ? hitTest(cols, li, scale.pxToTime(x), HOVER_TOL_PX / scale.pxPerUs) : -1;
      appStore.getState().select(hit >= 0 ? { side, eventIndex: hit } : null);
    };
    const onLeave = () => {
      if (tipRef.current) tipRef.current.hidden = true;
      drag = null;
    };
    canvas.addEventListener('wheel', onWheel, { passive: false });
    canvas.addEventListener('mousedown', onDown);
    canvas.addEventListener('mousemove', onMove);
    canvas.addEventListener('mouseup', onUp);
    canvas.addEventListener('mouseleave', onLeave);
    return () => {
      canvas.removeEventListener('wheel', onWheel);
      canvas.removeEventListener('mousedown', onDown);
      canvas.removeEventListener('mousemove', onMove);
      canvas.removeEventListener('mouseup', onUp);
      canvas.removeEventListener('mouseleave', onLeave);
    };
  }, [cols, layout, result, side]);

  if (!result || !cols) {
    return <section className="timeline empty" data-side={side}><div className="timeline-head"><b>{label}</b> <span className="muted">no data</span></div></section>;
  }
  const hidden = cols.ranksTotal - cols.ranksShown;
  const symmetricNote = result.symmetric && result.worldSize > cols.ranksTotal
    ? `ranks are symmetric: rank ${cols.lanes[0]?.rank ?? 0} stands for all ${result.worldSize}` : '';
  return (
    <section className="timeline" data-side={side} data-testid={`timeline-${side}`}>
      <div className="timeline-head">
        <b className={`side-badge side-${side}`}>{label}</b>
        <span className="timeline-title" title={result.title}>{result.title}</span>
        <span className="muted">{result.clock}</span>
        <span className="muted">step {fmtUs(result.metrics.stepTimeUs)}</span>
        {hidden > 0 && <span className="note" data-testid={`lane-note-${side}`}>showing {cols.ranksShown} of {cols.ranksTotal} ranks</span>}
        {symmetricNote && <span className="note">{symmetricNote}</span>}
      </div>
      <div className="timeline-body" ref={bodyRef}>
        <svg className="axis" ref={axisRef} height={AXIS_PX}><g /></svg>
        <canvas ref={canvasRef} data-lanes={cols.lanes.length} data-events={result.events.length} tabIndex={-1}
          aria-label={`timeline ${label}: ${cols.lanes.length} lanes`} />
        <div className="tooltip" ref={tipRef} hidden />
      </div>
    </section>
  );
}
