// URL state: the whole view in the query string so a shared link restores it. Config keys go
// through the config codec (configToQuery / parseLinkQuery; only non-defaults appear, and a link
// without a model opens the first screen's, as a bare link does); the view adds
// `view=<startUs>,<endUs>`, `theme=light|dark`, `sel=<side><index>`, `story=<id>` and `present=1`
// (the presentation view).
// A change of config or story pushes a history entry (Back undoes it); zoom, selection and
// theme replace the current one (Back should not replay every wheel tick).

import type { StoreApi } from 'zustand/vanilla';
import {
  changedFields,
  configToQuery,
  parseLinkQuery,
  type SimConfig,
  FIRST_SCREEN_CONFIG,
  FIRST_SCREEN_ZOOM,
} from '../config';
import type { TimeWindow } from '../trace';
import type { AppState } from './app_store';
import type { ThemeChoice } from './view_slice';
import type { Selection } from './store_types';
import { sweepFromUrl, sweepToUrl } from './sweep_slice';
import { fixed } from '../util';

const VIEW_KEY = 'view';
const THEME_KEY = 'theme';
const SELECT_KEY = 'sel'; // 'a123': side and event index (events are deterministic per config)
const STORY_KEY = 'story';
const PRESENT_KEY = 'present';
const SWEEP_KEY = 'sweep'; // the sweep panel's axes: 'path=v1,v2|path=v1,v2' (sweep_slice.ts)
const STORY_RE = /^[a-z0-9-]{1,40}$/;

export interface UrlState {
  readonly config: SimConfig | null; // null: no config in the URL → keep defaults
  readonly error: string | null;
  readonly window: TimeWindow | null;
  readonly theme: ThemeChoice | null;
  readonly selection: Selection | null;
  readonly story: string | null; // a story id as written; the UI checks it names a story
  readonly sweep: string | null; // the sweep's axes as written; applyUrlState checks them
  readonly present: boolean;
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
  const theme: ThemeChoice | null = t === 'light' || t === 'dark' ? t : null;
  const m = /^([ab])(\d+)$/.exec(params.get(SELECT_KEY) ?? '');
  const selection: Selection | null = m ? { side: m[1] as 'a' | 'b', eventIndex: Number(m[2]) } : null;
  const st = params.get(STORY_KEY);
  const story = st && STORY_RE.test(st) ? st : null;
  const sweep = params.get(SWEEP_KEY) || null;
  const present = params.get(PRESENT_KEY) === '1';
  for (const k of [VIEW_KEY, THEME_KEY, SELECT_KEY, STORY_KEY, SWEEP_KEY, PRESENT_KEY]) params.delete(k);
  const rest = params.toString();
  const view = { window, theme, selection, story, sweep, present };
  if (!rest) return { config: null, error: null, ...view };
  try {
    // a bad field falls back to its default; the rest of the link still applies
    const { config, errors } = parseLinkQuery(`?${rest}`); // no model named: the first screen's
    const error = errors.length ? `Link: ${errors.map((e) => e.message).join('; ')} (default used)` : null;
    return { config, error, ...view };
  } catch (e) {
    return { config: null, error: `Link ignored: ${(e as Error).message}`, ...view };
  }
}

/**
 * The config's keys: none for the first screen (a bare link opens it), else the model and the
 * fields that differ from the codec's defaults: a link names its model, so the defaults
 * themselves (tiny × 4) do not read back as the first screen.
 */
function configKeys(cfg: SimConfig): string {
  if (changedFields(cfg, FIRST_SCREEN_CONFIG).length === 0) return '';
  const rest = [...new URLSearchParams(configToQuery(cfg))].filter(([k]) => k !== 'model');
  return new URLSearchParams([['model', cfg.model], ...rest]).toString();
}

export function writeUrl(s: AppState): string {
  const params = new URLSearchParams(configKeys(s.config));
  const w = s.window;
  // ns precision
  if (w.startUs > 0 || w.endUs < s.limitUs) params.set(VIEW_KEY, `${+fixed(w.startUs, 3)},${+fixed(w.endUs, 3)}`);
  if (s.theme !== 'auto') params.set(THEME_KEY, s.theme);
  // a selection is only shareable while both sides come from the config (not a file or live run)
  const simulated = s.sides.a?.source === 'sim' && s.sides.b?.source === 'sim';
  if (s.selection && simulated) params.set(SELECT_KEY, `${s.selection.side}${s.selection.eventIndex}`);
  if (s.story) params.set(STORY_KEY, s.story);
  if (s.sweepAxes.length) params.set(SWEEP_KEY, sweepToUrl(s.sweepAxes));
  if (s.present) params.set(PRESENT_KEY, '1');
  const str = params.toString();
  return str ? `?${str}` : '';
}

/**
 * Apply a URL's state to the store (page load and Back/Forward). A URL without config keys
 * means the first screen (its config and zoom), so Back to the first page really undoes the
 * first change.
 */
export function applyUrlState(store: StoreApi<AppState>, url: UrlState): void {
  const st = store.getState();
  st.setTheme(url.theme ?? 'auto');
  st.setStory(url.story);
  st.setPresent(url.present);
  const fraction = url.config || url.window ? undefined : FIRST_SCREEN_ZOOM;
  st.restoreViewAfterSim({ window: url.window ?? undefined, fraction, selection: url.selection ?? undefined });
  st.setConfig(url.config ?? FIRST_SCREEN_CONFIG);
  if (url.error) st.setNotice({ kind: 'error', text: url.error });
  applySweep(st, url.sweep);
}

/** A link's sweep: run it unless it is the one already shown (Back after a point click keeps it). */
function applySweep(st: AppState, text: string | null): void {
  if (!text) {
    if (st.sweepAxes.length) st.clearSweep();
    return;
  }
  if (sweepToUrl(st.sweepAxes) === text && (st.sweepRunning || st.sweepRows.length)) return;
  try {
    st.startSweep(sweepFromUrl(text));
  } catch (e) {
    st.setNotice({ kind: 'error', text: `Link: sweep ignored: ${(e as Error).message}` });
  }
}

/**
 * Keep location.search in step with the store, coalesced: config or story changes push a
 * history entry, view changes replace it. Back/Forward re-apply the URL. Returns unsubscribe.
 */
export function startUrlSync(store: StoreApi<AppState>): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let push = false;
  let restoring = false; // after Back/Forward: write nothing until the restored simulation lands
  const flush = () => {
    timer = null;
    const next = writeUrl(store.getState());
    const url = `${location.pathname}${next}${location.hash}`;
    if (next !== location.search) {
      if (push) history.pushState(null, '', url);
      else history.replaceState(null, '', url);
    }
    push = false;
  };
  const onPop = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    push = false;
    restoring = true;
    applyUrlState(store, readUrlState(location.search));
    if (!store.getState().simulating) restoring = false; // nothing to wait for (a live-only change)
  };
  window.addEventListener('popstate', onPop);
  const unsub = store.subscribe((s, prev) => {
    if (restoring) {
      if (s.sides === prev.sides && !(prev.simulating && !s.simulating)) return;
      restoring = false; // landed (or failed): from here the store is the URL's state
      if (!timer) timer = setTimeout(flush, 150);
      return;
    }
    if (s.config !== prev.config || s.story !== prev.story || s.sweepAxes !== prev.sweepAxes) push = true;
    else if (
      s.window === prev.window &&
      s.theme === prev.theme &&
      s.selection === prev.selection &&
      s.present === prev.present
    )
      return;
    if (!timer) timer = setTimeout(flush, 150);
  });
  return () => {
    unsub();
    window.removeEventListener('popstate', onPop);
    if (timer) clearTimeout(timer);
  };
}
