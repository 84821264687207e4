// URL state: the whole view in the query string so a shared link restores it. Config keys go
// through the config codec (configToQuery / configFromQuery; only non-defaults appear); the view
// adds `view=<startUs>,<endUs>` and `theme=light|dark`.

import type { StoreApi } from 'zustand/vanilla';
import { configToQuery, parseConfigQuery, type SimConfig } from '../config';
import type { TimeWindow } from '../ui/timeline/time_scale';
import type { AppState } from './app_store';
import type { ThemeChoice } from './view_slice';
import type { Selection } from './types';

const VIEW_KEY = 'view';
const THEME_KEY = 'theme';
const SELECT_KEY = 'sel'; // 'a123': side and event index (events are deterministic per config)

export interface UrlState {
  readonly config: SimConfig | null; // null: no config in the URL → keep defaults
  readonly error: string | null;
  readonly window: TimeWindow | null;
  readonly theme: ThemeChoice | null;
  readonly selection: Selection | null;
}

export function readUrlState(search: string): UrlState {
  const params = new URLSearchParams(search);
  let window: TimeWindow | null = null;
  const v = params.get(VIEW_KEY);
  if (v) {
    const [s, e] = v.split(',').map(Number);
    if (Number.isFinite(s) && Number.isFinite(e) && e > s) window = { startUs: s, endUs: e };
  }
  const t = params.get(THEME_KEY);
  const theme = t === 'light' || t === 'dark' ? t : null;
  const m = /^([ab])(\d+)$/.exec(params.get(SELECT_KEY) ?? '');
  const selection: Selection | null = m ? { side: m[1] as 'a' | 'b', eventIndex: Number(m[2]) } : null;
  params.delete(VIEW_KEY);
  params.delete(THEME_KEY);
  params.delete(SELECT_KEY);
  const rest = params.toString();
  if (!rest) return { config: null, error: null, window, theme, selection };
  try {
    // a bad field falls back to its default; the rest of the link still applies
    const { config, errors } = parseConfigQuery(`?${rest}`);
    const error = errors.length ? `Link: ${errors.map((e) => e.message).join('; ')} (default used)` : null;
    return { config, error, window, theme, selection };
  } catch (e) {
    return { config: null, error: `Link ignored: ${(e as Error).message}`, window, theme, selection };
  }
}

export function writeUrl(s: AppState): string {
  const q = configToQuery(s.config).replace(/^\?/, '');
  const params = new URLSearchParams(q);
  const w = s.window;
  if (w.startUs > 0 || w.endUs < s.limitUs) params.set(VIEW_KEY, `${+w.startUs.toFixed(3)},${+w.endUs.toFixed(3)}`); // ns precision
  if (s.theme !== 'auto') params.set(THEME_KEY, s.theme);
  // a selection is only shareable while both sides come from the config (not a file or live run)
  const simulated = s.sides.a?.source === 'sim' && s.sides.b?.source === 'sim';
  if (s.selection && simulated) params.set(SELECT_KEY, `${s.selection.side}${s.selection.eventIndex}`);
  const str = params.toString();
  return str ? `?${str}` : '';
}

/** Keep location.search in step with the store (replaceState, coalesced). Returns unsubscribe. */
export function startUrlSync(store: StoreApi<AppState>): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const next = writeUrl(store.getState());
    if (next !== location.search) history.replaceState(null, '', `${location.pathname}${next}${location.hash}`);
  };
  return store.subscribe((s, prev) => {
    if (s.config === prev.config && s.window === prev.window && s.theme === prev.theme && s.selection === prev.selection) return;
    if (!timer) timer = setTimeout(flush, 150);
  });
}
