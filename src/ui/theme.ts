// Theme: 'auto' follows prefers-color-scheme; the toggle pins light or dark. The resolved theme
// is set on <html data-theme> for the CSS and returned to canvas/d3 code for the palette.

import { useEffect, useSyncExternalStore } from 'react';
import { useApp } from './use_app';
import type { Theme } from './palette';

const QUERY = '(prefers-color-scheme: dark)';

function subscribe(cb: () => void): () => void {
  const mq = window.matchMedia?.(QUERY);
  mq?.addEventListener('change', cb);
  return () => mq?.removeEventListener('change', cb);
}

function systemDark(): boolean {
  return window.matchMedia?.(QUERY).matches ?? false;
}

export function useResolvedTheme(): Theme {
  const choice = useApp((s) => s.theme);
  const dark = useSyncExternalStore(subscribe, systemDark, () => false);
  return choice === 'auto' ? (dark ? 'dark' : 'light') : choice;
}

/** Mirror the resolved theme onto <html data-theme>. */
export function useThemeAttribute(theme: Theme): void {
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
}
