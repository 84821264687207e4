// One timeline (side A or B): lanes per rank × stream drawn on a canvas from columnar arrays
// (ranks whose events are all alike drawn once, standing for all, until a click expands them),
// a d3 axis, zoom/pan/select by mouse, touch and keyboard (interact.ts) on the shared window,
// hover card, flow arrows of the selected collective. React renders only when the side's data
// changes; window/selection/theme changes redraw the canvas through the rAF scheduler.

import { type RefObject, useEffect, useMemo, useRef, useState } from 'react';
import { axisTop, scaleLinear, select } from 'd3';
import { appStore, reasonText, sideWindow, type Side, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { fmtBytes, fmtTick, fmtUs } from '../ui_format';
import { paletteFor } from '../palette';
import { plainReason } from '../glossary';
import { baseName, reasonsForEvent, bucketOf } from '../reason_lookup';
import { useResolvedTheme } from '../theme';
import { clockWords } from '../clocks';
import { profileWords } from '../torch_profile';
import { useInputKind } from '../input_kind';
import { overHbmWords, sideHbmFit } from '../hbm';
import { buildColumns, laneRedTotals, type TimelineColumns, waitParts } from './columns';
import { rankRangeText } from './rank_groups';
import { GUTTER_PX, drawTimeline, layoutLanes, type LaneLayout } from './draw';
import { attachInteractions } from './interact';
import { drawOverlay, flowOf } from './overlay';
import { clearProbe, publishProbe } from './probe';
import { cancelRedraw, scheduleRedraw } from './raf';
import { TimeScale, type TimeWindow } from '../../trace';

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
  return { name: e.name, rows, reason: last ? `${plainReason(last.code)} (${reasonText(last)})` : undefined };
}

function hoverHtml(r: SideResult, cols: TimelineColumns, i: number): string {
  const f = eventFacts(r, i);
  const reason = f.reason ? [`<i>${escapeHtml(f.reason)}</i>`] : [];
  const parts = waitParts(cols, i);
  const split =
    parts && parts.peerUs > 0
      ? [`${fmtUs(parts.exposedUs)} exposed communication (red) · ${fmtUs(parts.peerUs)} waiting for a late peer`]
      : [];
  return [`<b>${escapeHtml(f.name)}</b>`, ...[...f.rows, ...split].map(escapeHtml), ...reason].join('<br>');
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
      <button
        type="button"
        className="link"
        onClick={() => appStore.getState().select(null)}
        aria-label="clear the selection"
      >
        ×
      </button>
      <b>{f.name}</b> · {f.rows.join(' · ')}
      {f.reason && (
        <>
          {' '}
          · <i>{f.reason}</i>
        </>
      )}
    </div>
  );
}

/** Size the canvas backing store to the CSS size at the screen's pixel ratio (only when it changed). */
function sizeCanvas(canvas: HTMLCanvasElement, width: number, height: number): number {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  return dpr;
}

function mismatchMarker(r: SideResult) {
  const mm = r.mismatch;
  if (!mm) return undefined;
  const label = `collective mismatch #${mm.seq}: r${mm.ranks[0]} ≠ r${mm.ranks[1]} (${mm.ops[1].split(' ')[0]})`;
  return { rank: mm.ranks[1], timeUs: mm.timeUs, label };
}

/** The d3 axis over the canvas, on the same window and width as the scale. */
function drawAxis(svg: SVGSVGElement, w: TimeWindow, scale: TimeScale, width: number): void {
  const x = scaleLinear()
    .domain([w.startUs, w.endUs])
    .range([GUTTER_PX, GUTTER_PX + scale.widthPx]);
  const ticks = x.ticks(Math.max(2, Math.floor(scale.widthPx / 110)));
  const tickStep = ticks.length > 1 ? ticks[1] - ticks[0] : undefined;
  svg.setAttribute('width', String(width));
  select(svg)
    .select<SVGGElement>('g')
    .attr('transform', `translate(0, ${AXIS_PX - 1})`)
    .call(
      axisTop(x)
        .tickValues(ticks)
        .tickFormat((d) => fmtTick(Number(d), tickStep)),
    );
}

interface FrameInput {
  readonly canvas: HTMLCanvasElement;
  readonly svg: SVGSVGElement;
  readonly side: Side;
  readonly result: SideResult;
  readonly cols: TimelineColumns;
  readonly layout: LaneLayout;
  readonly flagged: ReadonlySet<number> | undefined;
  readonly theme: ReturnType<typeof useResolvedTheme>;
  readonly widthPx: number;
  readonly keyLane: number;
  readonly totals: ReturnType<typeof laneRedTotals>;
  readonly present: boolean;
}

/** One frame: lanes, overlay and axis at the store's window and selection; returns its scale. */
function drawFrame(f: FrameInput): TimeScale | null {
  const t0 = performance.now();
  const { canvas, side, result, cols, layout, flagged } = f;
  const s = appStore.getState();
  const height = layout.heightPx;
  const dpr = sizeCanvas(canvas, f.widthPx, height);
  const ctx = canvas.getContext('2d');
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const palette = paletteFor(f.theme);
  const win = sideWindow(s, side); // B's shifted while Learn one layer follows an op far apart
  const scale = new TimeScale(win, GUTTER_PX, Math.max(10, f.widthPx - GUTTER_PX - 8));
  const peer = s.selection?.peer?.side === side ? s.selection.peer.eventIndex : -1; // a diff-table row
  const sel = s.selection?.side === side ? s.selection.eventIndex : peer;
  const selEvent = sel >= 0 ? result.events[sel] : undefined;
  const subject = f.present ? { box: null } : undefined;
  const drawn = drawTimeline({
    ctx,
    cols,
    layout,
    scale,
    palette,
    subject,
    names: (i) => result.events[i].name,
    highlight: { eventIndex: sel, bucketId: selEvent?.bucketId ?? -1 },
    flagged,
    mismatch: mismatchMarker(result),
    cssWidthPx: f.widthPx,
    cssHeightPx: height,
  });
  const flow = selEvent ? flowOf(result.events, result.schedule, sel) : [];
  const flowArrows = drawOverlay({
    ctx,
    cols,
    layout,
    scale,
    palette,
    events: result.events,
    flow,
    keyLane: f.keyLane,
    heightPx: height,
  });
  drawAxis(f.svg, win, scale, f.widthPx);
  publishProbe(side, {
    lanes: cols.lanes.length,
    laneStreams: cols.lanes.map((l) => l.stream),
    laneRanks: cols.lanes.map((l) => l.ranks),
    alike: cols.alike,
    folded: cols.folded,
    ...f.totals,
    subject: subject?.box ?? null,
    events: result.events.length,
    drawn,
    selected: sel,
    flagged: flagged?.size ?? 0,
    flowArrows,
    keyLane: f.keyLane,
    laneCentresPx: Array.from(layout.top, (t) => t + layout.laneHeightPx / 2),
    window: [win.startUs, win.endUs],
    drawMs: performance.now() - t0,
  });
  return scale;
}

interface TimelineRefs {
  readonly body: RefObject<HTMLDivElement | null>;
  readonly scroll: RefObject<HTMLDivElement | null>; // the lanes, scrolled within on a short first screen
  readonly canvas: RefObject<HTMLCanvasElement | null>;
  readonly axis: RefObject<SVGSVGElement | null>;
  readonly tip: RefObject<HTMLDivElement | null>;
  readonly scale: RefObject<TimeScale | null>;
  readonly keyLane: RefObject<number>; // the keyboard cursor's lane while the canvas has focus
  readonly redraw: RefObject<(() => void) | null>;
}

function useTimelineRefs(): TimelineRefs {
  const body = useRef<HTMLDivElement>(null);
  const scroll = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const axis = useRef<SVGSVGElement>(null);
  const tip = useRef<HTMLDivElement>(null);
  const scale = useRef<TimeScale | null>(null);
  const keyLane = useRef(-1);
  const redraw = useRef<(() => void) | null>(null);
  return useMemo(() => ({ body, scroll, canvas, axis, tip, scale, keyLane, redraw }), []);
}

type Drawable = Omit<FrameInput, 'canvas' | 'svg' | 'widthPx' | 'keyLane'>;

/** Canvas redraw: imperative, coalesced per frame, on resize and on window or selection changes. */
function useCanvasRedraw(refs: TimelineRefs, d: Drawable | null): void {
  const { side, result, cols, layout, flagged, theme, totals, present } = d ?? {};
  useEffect(() => {
    const canvas = refs.canvas.current;
    const svg = refs.axis.current;
    if (!canvas || !svg || !cols || !layout || !result || !side || !theme || !totals) return;
    let widthPx = 800;
    const redraw = () => {
      const input = {
        canvas,
        svg,
        side,
        result,
        cols,
        layout,
        flagged,
        theme,
        widthPx,
        keyLane: refs.keyLane.current,
        totals,
        present: present === true,
      };
      const scale = drawFrame(input);
      if (scale) refs.scale.current = scale;
    };
    refs.redraw.current = redraw;
    const measure = () => {
      widthPx = Math.max(MIN_WIDTH_PX, refs.body.current?.clientWidth ?? 800);
    };
    const ro = new ResizeObserver(() => {
      measure();
      scheduleRedraw(redraw);
    });
    if (refs.body.current) ro.observe(refs.body.current);
    measure();
    scheduleRedraw(redraw);
    const unsub = appStore.subscribe((s, prev) => {
      if (s.window !== prev.window || s.shiftBUs !== prev.shiftBUs || s.selection !== prev.selection) {
        scheduleRedraw(redraw);
      }
    });
    return () => {
      unsub();
      ro.disconnect();
      cancelRedraw(redraw);
    };
  }, [refs, cols, layout, result, theme, side, flagged, totals, present]);
}

/** Mouse, touch and keyboard input on the canvas; the hover card follows the pointer. */
function useTimelineInput(refs: TimelineRefs, side: Side, d: Drawable | null): void {
  const { result, cols, layout } = d ?? {};
  useEffect(() => {
    const canvas = refs.canvas.current;
    if (!canvas || !cols || !layout || !result) return;
    const hover = (i: number, x: number, y: number) => {
      const tip = refs.tip.current;
      if (!tip) return;
      if (i < 0) {
        tip.hidden = true;
        return;
      }
      tip.innerHTML = hoverHtml(result, cols, i);
      tip.hidden = false;
      const bodyW = refs.body.current?.clientWidth ?? 800;
      tip.style.left = `${Math.max(0, Math.min(x + 14, bodyW - TIP_WIDTH_PX - 4))}px`;
      tip.style.top = `${y - (refs.scroll.current?.scrollTop ?? 0) + AXIS_PX + 14}px`;
    };
    return attachInteractions({
      canvas,
      side,
      cols,
      layout,
      hover,
      scale: () => refs.scale.current,
      onKeyLane: (lane) => {
        refs.keyLane.current = lane;
        const box = refs.scroll.current; // lanes capped on a short first screen: keep the cursor's in view
        if (box && lane >= 0) {
          const top = layout.top[lane];
          const bottom = top + layout.laneHeightPx;
          if (top < box.scrollTop) box.scrollTop = top - 4;
          else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom + 4 - box.clientHeight;
        }
        if (refs.redraw.current) scheduleRedraw(refs.redraw.current);
      },
    });
  }, [refs, cols, layout, result, side]);
}

/** 'showing 8 of 64 ranks (r0–r7); …' when lanes were left out, else ''. */
function laneNoteOf(cols: TimelineColumns, r: SideResult): string {
  const hidden = cols.ranksTotal - cols.ranksShown;
  if (hidden <= 0) return '';
  const shownRanks = [...new Set(cols.lanes.map((l) => l.rank))];
  const range = `r${shownRanks[0]}–r${shownRanks[shownRanks.length - 1]}`;
  const why = r.symmetric ? ' — with no jitter or straggler every rank runs the same schedule' : '';
  return (
    `showing ${cols.ranksShown} of ${cols.ranksTotal} ranks (${range}); ` +
    `${hidden} more hidden to keep lanes readable${why}`
  );
}

/** The folded lanes' label, or how to fold them: 'r0–r7 · all ranks alike', 'ranks differ: each drawn'. */
function FoldControl({
  side,
  r,
  cols,
  onToggle,
}: {
  side: Side;
  r: SideResult;
  cols: TimelineColumns;
  onToggle: () => void;
}) {
  if (cols.ranksTotal <= 1 && !cols.folded) return null;
  if (!cols.alike) {
    return (
      <span className="note" data-testid={`ranks-differ-${side}`}>
        ranks differ (jitter, a straggler or a hang): each rank drawn
      </span>
    );
  }
  const stands = cols.folded ? rankRangeText(cols.lanes[0]?.ranks ?? []) : '';
  const symmetric = r.symmetric && r.worldSize > cols.ranksTotal ? ` (rank 0 simulated for all ${r.worldSize})` : '';
  return (
    <button
      type="button"
      className="fold-toggle"
      data-testid={`fold-${side}`}
      aria-pressed={!cols.folded}
      onClick={onToggle}
      title={cols.folded ? 'draw every rank' : 'draw alike ranks once'}
    >
      {cols.folded ? (
        <>
          <b>{stands} · all ranks alike</b>
          {symmetric} · show each rank
        </>
      ) : (
        'fold alike ranks into one'
      )}
    </button>
  );
}

function TimelineHead({
  side,
  label,
  r,
  cols,
  onToggleFold,
}: Props & {
  r: SideResult;
  cols: TimelineColumns;
  onToggleFold: () => void;
}) {
  const laneNote = laneNoteOf(cols, r);
  const profile = profileWords(r);
  const symmetricNote =
    !cols.folded && r.symmetric && r.worldSize > cols.ranksTotal
      ? `ranks are symmetric: rank ${cols.lanes[0]?.rank ?? 0} stands for all ${r.worldSize}`
      : '';
  return (
    <div className="timeline-head">
      <b className={`side-badge side-${side}`}>{label}</b>
      <span className="timeline-title" title={r.title}>
        {r.title}
      </span>
      <span className="muted clock" data-testid={`clock-${side}`} title={r.clock}>
        {clockWords(r)}
      </span>
      {profile && (
        <span className="muted" data-testid={`profile-${side}`}>
          {profile}
        </span>
      )}
      <span className="muted">step {fmtUs(r.metrics.stepTimeUs)}</span>
      <HbmWarning r={r} />
      <FoldControl side={side} r={r} cols={cols} onToggle={onToggleFold} />
      {laneNote && (
        <span className="note" data-testid={`lane-note-${side}`}>
          {laneNote}
        </span>
      )}
      {symmetricNote && <span className="note">{symmetricNote}</span>}
    </div>
  );
}

function EmptyTimeline({ side, label }: Props) {
  return (
    <section className="timeline empty" data-side={side}>
      <div className="timeline-head">
        <b>{label}</b> <span className="muted">no data</span>
      </div>
    </section>
  );
}

export function Timeline({ side, label }: Props) {
  const result = useApp((s) => s.sides[side]);
  const theme = useResolvedTheme();
  const refs = useTimelineRefs();
  const [expanded, setExpanded] = useState(false);
  const present = useApp((s) => s.present);
  const cols = useMemo(() => {
    if (!result) return null;
    const fold = expanded ? null : { worldSize: result.symmetric ? result.worldSize : 0 };
    return buildColumns(result.events, undefined, fold);
  }, [result, expanded]);
  const layout = useMemo(() => (cols ? layoutLanes(cols, present) : null), [cols, present]);
  const totals = useMemo(() => (cols ? laneRedTotals(cols) : null), [cols]);
  const flagged = useMemo(() => (result ? disagreeingEvents(result) : undefined), [result]);
  const simulating = useApp((s) => s.simulating);
  const drawable =
    result && cols && layout && totals ? { side, result, cols, layout, flagged, theme, totals, present } : null;
  useCanvasRedraw(refs, drawable);
  useTimelineInput(refs, side, drawable);
  const drawn = drawable !== null;
  useEffect(() => {
    if (!drawn) clearProbe(side); // no canvas, no probe: a test waiting for a frame waits for the canvas
    return () => clearProbe(side);
  }, [drawn, side]);

  if (!result || !cols) return <EmptyTimeline side={side} label={label} />;
  const aria =
    `timeline ${label}, ${result.title}: ${cols.lanes.length} lanes. Arrow left/right pan, ` +
    'plus/minus zoom, up/down pick a lane, Enter selects the event at the centre line.';
  return (
    <section
      className={`timeline${simulating ? ' stale' : ''}`}
      data-side={side}
      data-testid={`timeline-${side}`}
      aria-busy={simulating}
    >
      <TimelineHead side={side} label={label} r={result} cols={cols} onToggleFold={() => setExpanded(!expanded)} />
      <div className="timeline-body" ref={refs.body}>
        <svg className="axis" ref={refs.axis} height={AXIS_PX} aria-hidden="true">
          <g />
        </svg>
        <div className="lanes-scroll" ref={refs.scroll}>
          <canvas ref={refs.canvas} tabIndex={0} role="img" aria-label={aria} />
        </div>
        <div className="tooltip" ref={refs.tip} hidden />
        {simulating && (
          <div className="stale-note" data-testid={`stale-${side}`}>
            simulating the new config…
          </div>
        )}
      </div>
      <SelectionLine side={side} r={result} />
    </section>
  );
}
