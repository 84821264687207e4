// One timeline (side A or B): lanes per rank × stream drawn on a canvas from columnar arrays,
// a d3 axis, zoom/pan/select by mouse, touch and keyboard (interact.ts) on the shared window,
// hover card, flow arrows of the selected collective. React renders only when the side's data
// changes; window/selection/theme changes redraw the canvas through the rAF scheduler.

import { useEffect, useMemo, useRef } from 'react';
import { axisTop, scaleLinear, select } from 'd3';
import { appStore, useApp, type Side, type SideResult } from '../../store';
import { fmtBytes, fmtTick, fmtUs } from '../format';
import { paletteFor } from '../palette';
import { plainReason } from '../glossary';
import { baseName, reasonsForEvent, bucketOf } from '../reasons';
import { useResolvedTheme } from '../theme';
import { clockWords } from '../clocks';
import { useInputKind } from '../input_kind';
import { overHbmWords, sideHbmFit } from '../hbm';
import { buildColumns, type TimelineColumns } from './columns';
import { GUTTER_PX, drawTimeline, layoutLanes, type LaneLayout } from './draw';
import { attachInteractions } from './interact';
import { drawOverlay, flowOf } from './overlay';
import { cancelRedraw, scheduleRedraw } from './raf';
import { TimeScale } from '../../trace/time_scale';

const AXIS_PX = 22;
const MIN_WIDTH_PX = 300;
const TIP_WIDTH_PX = 330;

interface Props {
  readonly side: Side;
  readonly label: string; // 'A', 'B'
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}

/** Events of collectives (or buckets holding one) that torch's log decided otherwise. */
function disagreeingEvents(r: SideResult): ReadonlySet<number> | undefined {
  const names = new Set(r.torchAgreement?.flatMap((a) => a.disagreements.map((d) => d.collective)) ?? []);
  if (names.size === 0) return undefined;
  const out = new Set<number>();
  const fx = (n: string) => baseName(n).replace(/\.bw$/, '');
  r.events.forEach((e, i) => {
    if (e.kind === 'compute') return;
    const members = bucketOf(r.schedule, e)?.members ?? [e.name];
    if (members.some((m) => names.has(fx(m)))) out.add(i);
  });
  return out;
}

/** What the hover card and the selection line say about an event: its name, then one fact a row. */
function eventFacts(r: SideResult, i: number): { name: string; rows: string[]; reason?: string } {
  const e = r.events[i];
  const rows: string[] = [
    `${e.kind}${e.op ? ` · op ${e.op}` : ''} · rank ${e.rank} · ${e.stream}`,
    `start ${fmtUs(e.start)} · duration ${fmtUs(e.dur)}`,
  ];
  if (e.bytes !== undefined) rows.push(`bytes ${fmtBytes(e.bytes)}`);
  const b = bucketOf(r.schedule, e);
  if (b) rows.push(`bucket #${b.id}: ${b.members.length} collectives, ${fmtBytes(b.bytes)}`);
  const more = (e.params?.length ?? 0) > 4 ? ` +${(e.params?.length ?? 0) - 4}` : '';
  if (e.params?.length) rows.push(`params ${e.params.slice(0, 4).join(', ')}${more}`);
  const reasons = reasonsForEvent(r.schedule, e);
  const last = reasons[reasons.length - 1];
  return { name: e.name, rows, reason: last ? `${plainReason(last.code)} (${last.text})` : undefined };
}

function hoverHtml(r: SideResult, i: number): string {
  const f = eventFacts(r, i);
  const reason = f.reason ? [`<i>${escapeHtml(f.reason)}</i>`] : [];
  return [`<b>${escapeHtml(f.name)}</b>`, ...f.rows.map(escapeHtml), ...reason].join('<br>');
}

/** 'does not fit in HBM: peak … = 2.96 × h100 HBM' in the head of a side whose step would not run. */
function HbmWarning({ r }: { r: SideResult }) {
  const hardware = useApp((s) => s.config.hardware);
  const fit = sideHbmFit(r, hardware);
  if (!fit || fit.fits) return null;
  return (
    <span className="warn-text hbm-warn" data-testid="hbm-warn" role="alert">
      does not fit in HBM: {overHbmWords(fit)}
    </span>
  );
}

/**
 * The selected event of this side, under its timeline: on a phone or a touch screen the details
 * panel is far below, and a card over the lanes would hide the other ranks.
 */
function SelectionLine({ side, r }: { side: Side; r: SideResult }) {
  const i = useApp((s) => (s.selection?.side === side ? s.selection.eventIndex : -1));
  const touch = useInputKind() === 'touch';
  if (i < 0 || !r.events[i]) return null;
  const f = eventFacts(r, i);
  return (
    <div className={`sel-inline${touch ? ' touch' : ''}`} data-testid={`sel-inline-${side}`} role="status">
      <button type="button" className="link" onClick={() => appStore.getState().select(null)}
        aria-label="clear the selection">×</button>
      <b>{f.name}</b> · {f.rows.join(' · ')}{f.reason && <> · <i>{f.reason}</i></>}
    </div>
  );
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
  const flagged = useMemo(() => (result ? disagreeingEvents(result) : undefined), [result]);
  const widthRef = useRef(800);
  const scaleRef = useRef<TimeScale | null>(null);
  const keyLaneRef = useRef(-1); // the keyboard cursor's lane while the canvas has focus
  const redrawRef = useRef<(() => void) | null>(null);
  const simulating = useApp((s) => s.simulating);

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
      const peer = s.selection?.peer?.side === side ? s.selection.peer.eventIndex : -1; // a diff-table row
      const sel = s.selection?.side === side ? s.selection.eventIndex : peer;
      const selEvent = sel >= 0 ? result.events[sel] : undefined;
      const mm = result.mismatch;
      const n = drawTimeline({
        ctx, cols, layout, scale, palette,
        names: (i) => result.events[i].name,
        highlight: { eventIndex: sel, bucketId: selEvent?.bucketId ?? -1 },
        flagged,
        mismatch: mm ? { rank: mm.ranks[1], timeUs: mm.timeUs, label: `collective mismatch #${mm.seq}: r${mm.ranks[0]} ≠ r${mm.ranks[1]} (${mm.ops[1].split(' ')[0]})` } : undefined,
        cssWidthPx: width,
        cssHeightPx: height,
      });
      const flow = selEvent ? flowOf(result.events, result.schedule, sel) : [];
      const arrows = drawOverlay({ ctx, cols, layout, scale, palette, events: result.events, flow, keyLane: keyLaneRef.current, heightPx: height });
      canvas.dataset.drawn = String(n);
      canvas.dataset.selected = String(sel);
      canvas.dataset.flagged = String(flagged?.size ?? 0);
      canvas.dataset.flowArrows = String(arrows);
      canvas.dataset.keyLane = String(keyLaneRef.current);
      canvas.dataset.laneTops = Array.from(layout.top, (t) => t + layout.laneHeightPx / 2).join(',');
      canvas.dataset.window = `${s.window.startUs.toFixed(3)},${s.window.endUs.toFixed(3)}`;
      // d3 axis on the same scale
      const x = scaleLinear().domain([s.window.startUs, s.window.endUs]).range([GUTTER_PX, GUTTER_PX + scale.widthPx]);
      const ticks = x.ticks(Math.max(2, Math.floor(scale.widthPx / 110)));
      const tickStep = ticks.length > 1 ? ticks[1] - ticks[0] : undefined;
      svg.setAttribute('width', String(width));
      select(svg).select<SVGGElement>('g').attr('transform', `translate(0, ${AXIS_PX - 1})`)
        .call(axisTop(x).tickValues(ticks).tickFormat((d) => fmtTick(Number(d), tickStep)));
      canvas.dataset.drawMs = (performance.now() - t0).toFixed(2); // read by the e2e perf check
    };
    redrawRef.current = redraw;
    const ro = new ResizeObserver(() => {
      widthRef.current = Math.max(MIN_WIDTH_PX, bodyRef.current?.clientWidth ?? 800);
      scheduleRedraw(redraw);
    });
    if (bodyRef.current) ro.observe(bodyRef.current);
    widthRef.current = Math.max(MIN_WIDTH_PX, bodyRef.current?.clientWidth ?? 800);
    scheduleRedraw(redraw);
    const unsub = appStore.subscribe((s, prev) => {
      if (s.window !== prev.window || s.selection !== prev.selection) scheduleRedraw(redraw);
    });
    return () => {
      unsub();
      ro.disconnect();
      cancelRedraw(redraw);
    };
  }, [cols, layout, result, theme, side, flagged]);

  // mouse, touch and keyboard input
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !cols || !layout || !result) return;
    const hover = (i: number, x: number, y: number) => {
      const tip = tipRef.current;
      if (!tip) return;
      if (i < 0) { tip.hidden = true; return; }
      tip.innerHTML = hoverHtml(result, i);
      tip.hidden = false;
      const bodyW = bodyRef.current?.clientWidth ?? 800;
      tip.style.left = `${Math.max(0, Math.min(x + 14, bodyW - TIP_WIDTH_PX - 4))}px`;
      tip.style.top = `${y + AXIS_PX + 14}px`;
    };
    return attachInteractions({
      canvas, side, cols, layout, hover,
      scale: () => scaleRef.current,
      onKeyLane: (lane) => {
        keyLaneRef.current = lane;
        if (redrawRef.current) scheduleRedraw(redrawRef.current);
      },
    });
  }, [cols, layout, result, side]);

  if (!result || !cols) {
    return <section className="timeline empty" data-side={side}><div className="timeline-head"><b>{label}</b> <span className="muted">no data</span></div></section>;
  }
  const hidden = cols.ranksTotal - cols.ranksShown;
  const symmetricNote = result.symmetric && result.worldSize > cols.ranksTotal
    ? `ranks are symmetric: rank ${cols.lanes[0]?.rank ?? 0} stands for all ${result.worldSize}` : '';
  const shownRanks = [...new Set(cols.lanes.map((l) => l.rank))];
  const laneNote = hidden > 0
    ? `showing ${cols.ranksShown} of ${cols.ranksTotal} ranks (r${shownRanks[0]}–r${shownRanks[shownRanks.length - 1]}); ${hidden} more hidden to keep lanes readable${result.symmetric ? ' — with no jitter or straggler every rank runs the same schedule' : ''}`
    : '';
  return (
    <section className={`timeline${simulating ? ' stale' : ''}`} data-side={side} data-testid={`timeline-${side}`} aria-busy={simulating}>
      <div className="timeline-head">
        <b className={`side-badge side-${side}`}>{label}</b>
        <span className="timeline-title" title={result.title}>{result.title}</span>
        <span className="muted clock" data-testid={`clock-${side}`} title={result.clock}>{clockWords(result)}</span>
        <span className="muted">step {fmtUs(result.metrics.stepTimeUs)}</span>
        <HbmWarning r={result} />
        {hidden > 0 && <span className="note" data-testid={`lane-note-${side}`}>{laneNote}</span>}
        {symmetricNote && <span className="note">{symmetricNote}</span>}
      </div>
      <div className="timeline-body" ref={bodyRef}>
        <svg className="axis" ref={axisRef} height={AXIS_PX} aria-hidden="true"><g /></svg>
        <canvas ref={canvasRef} data-lanes={cols.lanes.length} data-events={result.events.length} tabIndex={0} role="img"
          aria-label={`timeline ${label}, ${result.title}: ${cols.lanes.length} lanes. Arrow left/right pan, plus/minus zoom, up/down pick a lane, Enter selects the event at the centre line.`} />
        <div className="tooltip" ref={tipRef} hidden />
        {simulating && <div className="stale-note" data-testid={`stale-${side}`}>simulating the new config…</div>}
      </div>
      <SelectionLine side={side} r={result} />
    </section>
  );
}
