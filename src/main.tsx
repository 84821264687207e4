// Entry: restore the view from the URL (or the default config), keep the URL in step, render
// the app, and make the page cross-origin isolated on static hosts via coi-serviceworker.js.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { appStore, applyUrlState, readUrlState, startUrlSync } from './store';
import { App, applyStory, storyById, type TimelineProbe, timelineProbes } from './ui';

const RELOAD_FLAG = 'fsdp-sim:coi-reloaded';

/** Static hosts send no COOP/COEP: install the service worker that adds them, then reload once. */
async function ensureCrossOriginIsolation(): Promise<void> {
  if (crossOriginIsolated || !('serviceWorker' in navigator) || !isSecureContext) return;
  const reloadOnce = () => {
    if (sessionStorage.getItem(RELOAD_FLAG)) return; // already tried: the banner explains the rest
    sessionStorage.setItem(RELOAD_FLAG, '1');
    location.reload();
  };
  try {
    await navigator.serviceWorker.register(new URL('coi-serviceworker.js', document.baseURI).href);
    if (navigator.serviceWorker.controller) reloadOnce();
    else navigator.serviceWorker.addEventListener('controllerchange', reloadOnce, { once: true });
  } catch (e) {
    const text = `Could not install coi-serviceworker.js: ${(e as Error).message}`;
    appStore.getState().setNotice({ kind: 'error', text });
  }
}

function init(): void {
  const url = readUrlState(location.search);
  const story = storyById(url.story);
  // `?story=<id>` alone loads the story (config, zoom, selection); with config keys the link
  // already holds the story's state and only the caption comes from the id
  if (story && !url.config && !url.window) {
    if (url.theme) appStore.getState().setTheme(url.theme);
    appStore.getState().setPresent(url.present);
    void applyStory(appStore, story);
  } else {
    applyUrlState(appStore, { ...url, story: story ? story.id : null });
  }
  startUrlSync(appStore);
}

/**
 * The store and what each timeline drew last (ui/timeline/probe.ts), for the e2e tests and for
 * poking at a run from the devtools console.
 */
declare global {
  interface Window {
    __FSDP_SIM__?: {
      readonly store: typeof appStore;
      readonly timelines: Readonly<Partial<Record<'a' | 'b', TimelineProbe>>>;
    };
  }
}
window.__FSDP_SIM__ = { store: appStore, timelines: timelineProbes };

if (crossOriginIsolated) sessionStorage.removeItem(RELOAD_FLAG);
init();
void ensureCrossOriginIsolation();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
