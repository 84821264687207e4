// Timeline input: one set of handlers for mouse, touch, pen and keyboard, all acting on the
// shared window in the store. Pointer events cover mouse and touch alike: drag pans, a tap or
// click without movement selects, two pointers pinch-zoom; the wheel zooms (shift/horizontal
// pans). Keyboard, for a focused canvas: ←/→ pan, +/− zoom, ↑/↓ pick a lane, Enter selects the
// event under the centre line of that lane, Escape clears.

import { appStore, type Side } from '../../store';
import { hitTest, type TimelineColumns } from './columns';
import { GUTTER_PX, laneAt, type LaneLayout } from './draw';
import type { TimeScale } from '../../trace/time_scale';

export const HOVER_TOL_PX = 3;
export const TAP_TOL_PX = 10; // a finger is wider than a cursor
const DRAG_START_PX = 4; // movement below this is still a click / tap
const WHEEL_ZOOM = 0.0015; // zoom factor per wheel delta unit: k = exp(dy · WHEEL_ZOOM)
const KEY_PAN = 0.1; // fraction of the window per arrow press
const KEY_ZOOM = 0.8;

export interface InteractTarget {
  readonly canvas: HTMLCanvasElement;
  readonly side: Side;
  readonly cols: TimelineColumns;
  readonly layout: LaneLayout;
  readonly scale: () => TimeScale | null;
  /** Hover card: show for event i at canvas-local (x, y), or hide (i < 0). */
  readonly hover: (i: number, x: number, y: number) => void;
  /** The lane the keyboard cursor is on changed (for drawing it). */
  readonly onKeyLane: (lane: number) => void;
}

interface Pt { x: number; y: number }

/** Event under canvas-local (x, y) within tolPx, or -1. */
export function eventAt(t: InteractTarget, x: number, y: number, tolPx: number): number {
  const scale = t.scale();
  if (!scale || x < GUTTER_PX) return -1;
  return hitTest(t.cols, laneAt(t.layout, y), scale.pxToTime(x), tolPx / scale.pxPerUs);
}

/** Attach every handler; returns the detach function. */
export function attachInteractions(t: InteractTarget): () => void {
  const { canvas } = t;
  const pointers = new Map<number, Pt>();
  let drag: { x: number; y: number; startUs: number; endUs: number; moved: boolean } | null = null;
  let pinch: { dist: number; midUs: number; startUs: number; endUs: number } | null = null;
  let keyLane = 0;
  const local = (ev: { clientX: number; clientY: number }): Pt => {
    const r = canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top };
  };
  const startPinch = () => {
    const scale = t.scale();
    const [p, q] = [...pointers.values()];
    if (!scale || !p || !q) return;
    const w = appStore.getState().window;
    pinch = { dist: Math.max(1, Math.abs(p.x - q.x)), midUs: scale.pxToTime((p.x + q.x) / 2), startUs: w.startUs, endUs: w.endUs };
    drag = null;
  };
  const onWheel = (ev: WheelEvent) => {
    const scale = t.scale();
    if (!scale) return;
    ev.preventDefault();
    const { x } = local(ev);
    const st = appStore.getState();
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) st.panBy(((ev.shiftKey ? ev.deltaY : ev.deltaX) / scale.widthPx) * 0.5);
    else st.zoomBy(Math.exp(ev.deltaY * WHEEL_ZOOM), scale.pxToTime(Math.max(x, GUTTER_PX)));
  };
  const onDown = (ev: PointerEvent) => {
    if (ev.pointerType === 'mouse' && ev.button !== 0) return;
    pointers.set(ev.pointerId, local(ev));
    canvas.setPointerCapture?.(ev.pointerId);
    if (pointers.size === 2) return startPinch();
    const w = appStore.getState().window;
    const p = local(ev);
    drag = { x: p.x, y: p.y, startUs: w.startUs, endUs: w.endUs, moved: false };
  };
  const onMove = (ev: PointerEvent) => {
    const p = local(ev);
    if (pointers.has(ev.pointerId)) pointers.set(ev.pointerId, p);
    const scale = t.scale();
    if (!scale) return;
    if (pinch && pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const k = pinch.dist / Math.max(1, Math.abs(a.x - b.x)); // fingers apart → k < 1 → zoom in
      const st = appStore.getState();
      st.setWindow({ startUs: pinch.startUs, endUs: pinch.endUs });
      st.zoomBy(k, pinch.midUs);
      return;
    }
    if (drag && pointers.has(ev.pointerId)) {
      const dx = p.x - drag.x;
      if (Math.abs(dx) > DRAG_START_PX || Math.abs(p.y - drag.y) > DRAG_START_PX) drag.moved = true;
      if (drag.moved) {
        const dUs = -dx / scale.pxPerUs;
        appStore.getState().setWindow({ startUs: drag.startUs + dUs, endUs: drag.endUs + dUs });
      }
      t.hover(-1, 0, 0);
      return;
    }
    if (ev.pointerType !== 'mouse') return; // hover cards follow a cursor, not a finger
    const hit = eventAt(t, p.x, p.y, HOVER_TOL_PX);
    canvas.style.cursor = hit < 0 ? 'grab' : 'pointer';
    t.hover(hit, p.x, p.y);
  };
  const onUp = (ev: PointerEvent) => {
    if (!pointers.delete(ev.pointerId)) return;
    if (pinch) {
      if (pointers.size === 0) pinch = null;
      return;
    }
    const d = drag;
    drag = null;
    if (!d || d.moved) return;
    const p = local(ev);
    const hit = eventAt(t, p.x, p.y, ev.pointerType === 'mouse' ? HOVER_TOL_PX : TAP_TOL_PX);
    appStore.getState().select(hit >= 0 ? { side: t.side, eventIndex: hit } : null);
    // a tap shows the selection under the timeline (timeline.tsx), not a card over the other ranks
    if (ev.pointerType !== 'mouse') t.hover(-1, 0, 0);
  };
  const onCancel = (ev: PointerEvent) => {
    pointers.delete(ev.pointerId);
    if (pointers.size === 0) { drag = null; pinch = null; }
  };
  const onLeave = (ev: PointerEvent) => { if (ev.pointerType === 'mouse') t.hover(-1, 0, 0); };
  const onKey = (ev: KeyboardEvent) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const st = appStore.getState();
    const lanes = t.cols.lanes.length;
    switch (ev.key) {
      case 'ArrowLeft': st.panBy(-KEY_PAN); break;
      case 'ArrowRight': st.panBy(KEY_PAN); break;
      case '+': case '=': st.zoomBy(KEY_ZOOM); break;
      case '-': case '_': st.zoomBy(1 / KEY_ZOOM); break;
      case 'ArrowUp': keyLane = Math.max(0, keyLane - 1); t.onKeyLane(keyLane); break;
      case 'ArrowDown': keyLane = Math.min(lanes - 1, keyLane + 1); t.onKeyLane(keyLane); break;
      case 'Enter': case ' ': {
        const w = st.window;
        const mid = (w.startUs + w.endUs) / 2;
        const hit = hitTest(t.cols, keyLane, mid, (w.endUs - w.startUs) / 2);
        if (hit >= 0) st.select({ side: t.side, eventIndex: hit });
        break;
      }
      default: return;
    }
    ev.preventDefault();
    ev.stopPropagation(); // the page-wide W/S/A/D handler stays out of it
  };
  const onFocus = () => t.onKeyLane(keyLane);
  const onBlur = () => t.onKeyLane(-1);
  const listeners: [string, EventListener, AddEventListenerOptions?][] = [
    ['wheel', onWheel as EventListener, { passive: false }],
    ['pointerdown', onDown as EventListener],
    ['pointermove', onMove as EventListener],
    ['pointerup', onUp as EventListener],
    ['pointercancel', onCancel as EventListener],
    ['pointerleave', onLeave as EventListener],
    ['keydown', onKey as EventListener],
    ['focus', onFocus as EventListener],
    ['blur', onBlur as EventListener],
  ];
  for (const [name, fn, opts] of listeners) canvas.addEventListener(name, fn, opts);
  return () => { for (const [name, fn] of listeners) canvas.removeEventListener(name, fn); };
}
