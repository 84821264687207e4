// Timeline input: one set of handlers for mouse, touch, pen and keyboard, all acting on the
// shared window in the store. Pointer events cover mouse and touch alike: drag pans, a tap or
// click without movement selects, two pointers pinch-zoom; the wheel zooms (shift/horizontal
// pans). Keyboard, for a focused canvas: ←/→ pan, +/− zoom, ↑/↓ pick a lane, Enter selects the
// event under the centre line of that lane, Escape clears.

import { appStore, sideWindow, type Side } from '../../store';
import { hitTest, type TimelineColumns } from './columns';
import { GUTTER_PX, laneAt, type LaneLayout } from './draw';
import type { TimeScale } from '../../trace';

const HOVER_TOL_PX = 3;
const TAP_TOL_PX = 10; // a finger is wider than a cursor
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

interface Pt {
  x: number;
  y: number;
}

/** Event under canvas-local (x, y) within tolPx, or -1. */
function eventAt(t: InteractTarget, x: number, y: number, tolPx: number): number {
  const scale = t.scale();
  if (!scale || x < GUTTER_PX) return -1;
  return hitTest(t.cols, laneAt(t.layout, y), scale.pxToTime(x), tolPx / scale.pxPerUs);
}

type Local = (ev: { clientX: number; clientY: number }) => Pt;

/** The pointers down now and the gesture they make: a drag (pan, or a tap) or a two-finger pinch. */
interface Gesture {
  readonly pointers: Map<number, Pt>;
  drag: { x: number; y: number; startUs: number; endUs: number; moved: boolean } | null;
  pinch: { dist: number; midUs: number; startUs: number; endUs: number } | null;
}

function startPinch(t: InteractTarget, g: Gesture): void {
  const scale = t.scale();
  const [p, q] = [...g.pointers.values()];
  if (!scale || !p || !q) return;
  const w = appStore.getState().window;
  const dist = Math.max(1, Math.abs(p.x - q.x));
  const shift = sideWindow(appStore.getState(), t.side).startUs - w.startUs; // B's, while a walk follows an op
  g.pinch = { dist, midUs: scale.pxToTime((p.x + q.x) / 2) - shift, startUs: w.startUs, endUs: w.endUs };
  g.drag = null;
}

/** Zoom the window the pinch started on by how far the two fingers moved apart. */
function movePinch(g: Gesture): void {
  if (!g.pinch) return;
  const [a, b] = [...g.pointers.values()];
  const k = g.pinch.dist / Math.max(1, Math.abs(a.x - b.x)); // fingers apart → k < 1 → zoom in
  const st = appStore.getState();
  st.setWindow({ startUs: g.pinch.startUs, endUs: g.pinch.endUs });
  st.zoomBy(k, g.pinch.midUs);
}

/** Pan the window the drag started on, once the pointer moved past DRAG_START_PX. */
function moveDrag(t: InteractTarget, g: Gesture, p: Pt, scale: TimeScale): void {
  const drag = g.drag;
  if (!drag) return;
  const dx = p.x - drag.x;
  if (Math.abs(dx) > DRAG_START_PX || Math.abs(p.y - drag.y) > DRAG_START_PX) drag.moved = true;
  if (drag.moved) {
    const dUs = -dx / scale.pxPerUs;
    appStore.getState().setWindow({ startUs: drag.startUs + dUs, endUs: drag.endUs + dUs });
  }
  t.hover(-1, 0, 0);
}

function pointerHandlers(t: InteractTarget, local: Local) {
  const g: Gesture = { pointers: new Map(), drag: null, pinch: null };
  const onDown = (ev: PointerEvent) => {
    if (ev.pointerType === 'mouse' && ev.button !== 0) return;
    g.pointers.set(ev.pointerId, local(ev));
    t.canvas.setPointerCapture?.(ev.pointerId);
    if (g.pointers.size === 2) return startPinch(t, g);
    const w = appStore.getState().window;
    const p = local(ev);
    g.drag = { x: p.x, y: p.y, startUs: w.startUs, endUs: w.endUs, moved: false };
  };
  const onMove = (ev: PointerEvent) => {
    const p = local(ev);
    if (g.pointers.has(ev.pointerId)) g.pointers.set(ev.pointerId, p);
    const scale = t.scale();
    if (!scale) return;
    if (g.pinch && g.pointers.size === 2) return movePinch(g);
    if (g.drag && g.pointers.has(ev.pointerId)) return moveDrag(t, g, p, scale);
    if (ev.pointerType !== 'mouse') return; // hover cards follow a cursor, not a finger
    const hit = eventAt(t, p.x, p.y, HOVER_TOL_PX);
    t.canvas.style.cursor = hit < 0 ? 'grab' : 'pointer';
    t.hover(hit, p.x, p.y);
  };
  const onUp = (ev: PointerEvent) => {
    if (!g.pointers.delete(ev.pointerId)) return;
    if (g.pinch) {
      if (g.pointers.size === 0) g.pinch = null;
      return;
    }
    const d = g.drag;
    g.drag = null;
    if (!d || d.moved) return;
    const p = local(ev);
    const hit = eventAt(t, p.x, p.y, ev.pointerType === 'mouse' ? HOVER_TOL_PX : TAP_TOL_PX);
    appStore.getState().select(hit >= 0 ? { side: t.side, eventIndex: hit } : null);
    // a tap shows the selection under the timeline (timeline.tsx), not a card over the other ranks
    if (ev.pointerType !== 'mouse') t.hover(-1, 0, 0);
  };
  const onCancel = (ev: PointerEvent) => {
    g.pointers.delete(ev.pointerId);
    if (g.pointers.size === 0) {
      g.drag = null;
      g.pinch = null;
    }
  };
  const onLeave = (ev: PointerEvent) => {
    if (ev.pointerType === 'mouse') t.hover(-1, 0, 0);
  };
  return { onDown, onMove, onUp, onCancel, onLeave };
}

function wheelHandler(t: InteractTarget, local: Local) {
  return (ev: WheelEvent) => {
    const scale = t.scale();
    if (!scale) return;
    ev.preventDefault();
    const { x } = local(ev);
    const st = appStore.getState();
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      st.panBy(((ev.shiftKey ? ev.deltaY : ev.deltaX) / scale.widthPx) * 0.5);
    } else {
      const shift = sideWindow(st, t.side).startUs - st.window.startUs; // B's, while a walk follows an op
      st.zoomBy(Math.exp(ev.deltaY * WHEEL_ZOOM), scale.pxToTime(Math.max(x, GUTTER_PX)) - shift);
    }
  };
}

/** Keys of a focused canvas, and the keyboard cursor's lane they move. */
function keyHandlers(t: InteractTarget) {
  let keyLane = 0;
  const onKey = (ev: KeyboardEvent) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const st = appStore.getState();
    const lanes = t.cols.lanes.length;
    switch (ev.key) {
      case 'ArrowLeft':
        st.panBy(-KEY_PAN);
        break;
      case 'ArrowRight':
        st.panBy(KEY_PAN);
        break;
      case '+':
      case '=':
        st.zoomBy(KEY_ZOOM);
        break;
      case '-':
      case '_':
        st.zoomBy(1 / KEY_ZOOM);
        break;
      case 'ArrowUp':
        keyLane = Math.max(0, keyLane - 1);
        t.onKeyLane(keyLane);
        break;
      case 'ArrowDown':
        keyLane = Math.min(lanes - 1, keyLane + 1);
        t.onKeyLane(keyLane);
        break;
      case 'Enter':
      case ' ': {
        const w = sideWindow(st, t.side);
        const mid = (w.startUs + w.endUs) / 2;
        const hit = hitTest(t.cols, keyLane, mid, (w.endUs - w.startUs) / 2);
        if (hit >= 0) st.select({ side: t.side, eventIndex: hit });
        break;
      }
      default:
        return;
    }
    ev.preventDefault();
    ev.stopPropagation(); // the page-wide W/S/A/D handler stays out of it
  };
  const onFocus = () => t.onKeyLane(keyLane);
  const onBlur = () => t.onKeyLane(-1);
  return { onKey, onFocus, onBlur };
}

/** Attach every handler; returns the detach function. */
export function attachInteractions(t: InteractTarget): () => void {
  const { canvas } = t;
  const local: Local = (ev) => {
    const r = canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top };
  };
  const ptr = pointerHandlers(t, local);
  const key = keyHandlers(t);
  const listeners: [string, EventListener, AddEventListenerOptions?][] = [
    ['wheel', wheelHandler(t, local) as EventListener, { passive: false }],
    ['pointerdown', ptr.onDown as EventListener],
    ['pointermove', ptr.onMove as EventListener],
    ['pointerup', ptr.onUp as EventListener],
    ['pointercancel', ptr.onCancel as EventListener],
    ['pointerleave', ptr.onLeave as EventListener],
    ['keydown', key.onKey as EventListener],
    ['focus', key.onFocus as EventListener],
    ['blur', key.onBlur as EventListener],
  ];
  for (const [name, fn, opts] of listeners) canvas.addEventListener(name, fn, opts);
  return () => {
    for (const [name, fn] of listeners) canvas.removeEventListener(name, fn);
  };
}
