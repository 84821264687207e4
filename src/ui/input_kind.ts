// Which input the user has: 'touch' where the primary pointer is coarse, switched by the last
// pointer actually used (a touch laptop's tap, a tablet's mouse). Hints and the tour say "tap" or
// "hover", "pinch" or "wheel" from it, so the words match the hand on the screen.

import { useSyncExternalStore } from 'react';

export type InputKind = 'touch' | 'mouse';

let current: InputKind | null = null;
const listeners = new Set<() => void>();

function initial(): InputKind {
  if (typeof window === 'undefined' || typeof matchMedia !== 'function') return 'mouse';
  return matchMedia('(pointer: coarse)').matches ? 'touch' : 'mouse';
}

function onPointer(e: PointerEvent): void {
  const k: InputKind = e.pointerType === 'touch' || e.pointerType === 'pen' ? 'touch' : 'mouse';
  if (k === current) return;
  current = k;
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  if (listeners.size === 0) window.addEventListener('pointerdown', onPointer, { capture: true, passive: true });
  listeners.add(l);
  return () => {
    listeners.delete(l);
    if (listeners.size === 0) window.removeEventListener('pointerdown', onPointer, { capture: true });
  };
}

function inputKind(): InputKind {
  current ??= initial();
  return current;
}

export function useInputKind(): InputKind {
  return useSyncExternalStore(subscribe, inputKind, () => 'mouse');
}

/** What the keyboard does once a timeline has focus. */
const KEYS_HINT = 'focused timeline: arrows, +/−, Enter';

/** The navigation hint for the input at hand. */
export function navHint(k: InputKind): string {
  return k === 'touch'
    ? 'drag to pan · pinch to zoom · tap an event to select it · tap a dotted word for its definition'
    : `wheel/W/S zoom · drag/A/D pan · 0 fit · click an event to select it · ${KEYS_HINT}`;
}

const CLICK_RE = /\b([Cc])lick(s|ed|ing)?\b/g;
const TAP_FORMS: Readonly<Record<string, string>> = { '': 'tap', s: 'taps', ed: 'tapped', ing: 'tapping' };

/** A sentence written for a mouse ('Click a green all-gather …'), with "tap" for "click" on touch. */
export function forHand(text: string, k: InputKind): string {
  if (k !== 'touch') return text;
  return text.replace(CLICK_RE, (_m, c: string, suffix: string | undefined) => {
    const tap = TAP_FORMS[suffix ?? ''];
    return c === 'C' ? `T${tap.slice(1)}` : tap;
  });
}
